'use strict';
// Where the bench connects: DATABASE_URL (a server it may CREATE/DROP databases on) and
// REDIS_URL. Only loopback hosts are accepted: the bench sends traffic to this machine only.

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function loopbackUrl(name, value) {
  const url = new URL(value);
  if (!LOOPBACK.has(url.hostname)) {
    throw new Error(
      `${name}=${value}: the bench only talks to loopback hosts (127.0.0.1, localhost, ::1)`,
    );
  }
  return url;
}

const serverUrl = loopbackUrl(
  'DATABASE_URL',
  process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
);
const redisUrl = loopbackUrl('REDIS_URL', process.env.REDIS_URL || 'redis://127.0.0.1:6379');

/** The server URL with another database name. */
function databaseUrl(database) {
  const url = new URL(serverUrl.toString());
  url.pathname = `/${database}`;
  return url.toString();
}

function redisConnection() {
  return {
    host: redisUrl.hostname,
    port: Number(redisUrl.port || 6379),
    db: Number(redisUrl.pathname.slice(1) || 0),
    maxRetriesPerRequest: null,
  };
}

module.exports = { serverUrl, redisUrl, databaseUrl, redisConnection };
