import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The dashboard's sign-in session: a browser cannot send `Authorization` when it navigates or
 * opens an EventSource, so the sign-in form trades the admin token for this cookie. It holds no
 * secret and no server state: an expiry and an HMAC of it under a key derived from the token,
 * so every instance that shares the token accepts it, and a new token ends every session.
 */
export const ADMIN_SESSION_COOKIE = 'example_admin_session';

/** Where the browser sends it: the dashboard only, never the JSON management routes. */
export const ADMIN_SESSION_PATH = '/queue';

/** How long a session lasts. */
export const ADMIN_SESSION_TTL_MS = 8 * 60 * 60 * 1000;

const FORMAT = /^v1\.([0-9]{1,15})\.([A-Za-z0-9_-]{43})$/;

function sessionKey(adminToken: string): Buffer {
  return createHash('sha256').update(`example admin session\0${adminToken}`, 'utf8').digest();
}

function signature(adminToken: string, expiresAt: number): Buffer {
  return createHmac('sha256', sessionKey(adminToken)).update(`v1.${expiresAt}`).digest();
}

/** A session for `adminToken` that ends `ADMIN_SESSION_TTL_MS` after `now`. */
export function issueAdminSession(adminToken: string, now = Date.now()): string {
  const expiresAt = now + ADMIN_SESSION_TTL_MS;
  return `v1.${expiresAt}.${signature(adminToken, expiresAt).toString('base64url')}`;
}

/** Whether `value` is a session `issueAdminSession` made for `adminToken` that has not expired. */
export function isAdminSession(value: string, adminToken: string, now = Date.now()): boolean {
  const match = FORMAT.exec(value);
  if (!match) return false;
  const expiresAt = Number(match[1]);
  const given = Buffer.from(match[2], 'base64url');
  const expected = signature(adminToken, expiresAt);
  return given.length === expected.length && timingSafeEqual(given, expected) && now < expiresAt;
}

/**
 * The `Set-Cookie` value that stores `session` (or, with `undefined`, removes it): HttpOnly, so
 * no script reads it; SameSite=Strict, so no other site's page sends it; Secure over HTTPS.
 */
export function sessionCookie(session: string | undefined, https: boolean): string {
  const maxAge = session === undefined ? 0 : Math.floor(ADMIN_SESSION_TTL_MS / 1000);
  return (
    `${ADMIN_SESSION_COOKIE}=${session ?? ''}; Path=${ADMIN_SESSION_PATH}; Max-Age=${maxAge}; ` +
    `HttpOnly; SameSite=Strict${https ? '; Secure' : ''}`
  );
}

/** The session cookie's value in a `Cookie` request header, if there is one. */
export function sessionFromCookieHeader(header: string | string[] | undefined): string | undefined {
  if (typeof header !== 'string') return undefined;
  for (const pair of header.split(';')) {
    const [name, ...value] = pair.trim().split('=');
    if (name === ADMIN_SESSION_COOKIE) return value.join('=');
  }
  return undefined;
}
