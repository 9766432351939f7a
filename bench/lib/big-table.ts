/**
 * What the big-table scripts (example-listing.ts, job-stats.ts) share: the server they may
 * CREATE DATABASE on, a database of their own kept across runs on request, and a jobs table
 * filled a million rows per statement.
 */
import { Client } from 'pg';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { JOBS } = require('./schema') as { JOBS: string };

/** Rows per INSERT … SELECT generate_series while filling. */
const CHUNK = 1_000_000;

/** DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres): loopback hosts only. */
const serverUrl = new URL(
  process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
);
if (!['127.0.0.1', 'localhost', '::1', '[::1]'].includes(serverUrl.hostname)) {
  throw new Error('DATABASE_URL: loopback hosts only');
}

/** The URL of `database` on the server of DATABASE_URL. */
export function urlOf(database: string): string {
  const url = new URL(serverUrl.toString());
  url.pathname = `/${database}`;
  return url.toString();
}

export async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Creates `database` afresh, or with `reuse` keeps it when it exists (what a `--keep` run left).
 * Its name must not start with jqbench_: the bench drops those, taking them for leftovers of a
 * killed run.
 */
export async function openBenchDatabase(database: string, reuse: boolean): Promise<void> {
  await withClient(urlOf('postgres'), async (admin) => {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      database,
    ]);
    if (rowCount && !reuse) await admin.query(`DROP DATABASE ${database} WITH (FORCE)`);
    if (!rowCount || !reuse) await admin.query(`CREATE DATABASE ${database}`);
  });
}

export function dropBenchDatabase(database: string): Promise<unknown> {
  return withClient(urlOf('postgres'), (admin) =>
    admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`),
  );
}

/**
 * Fills the jobs table with `rows` jobs unless it holds them already (`exact`: exactly that
 * many, else at least), then VACUUM ANALYZE. `insert` is one INSERT … SELECT over
 * `generate_series($1, $2)` that takes $3, the first row to leave pending (the newest 1%), and
 * $4, the row count; it runs once per million rows.
 */
export async function fillJobs(
  client: Client,
  {
    database,
    rows,
    exact,
    insert,
  }: { database: string; rows: number; exact: boolean; insert: string },
): Promise<void> {
  const count = Number((await client.query(`SELECT count(*) AS n FROM ${JOBS}`)).rows[0].n);
  if (exact ? count === rows : count >= rows) return;
  if (count !== 0) await client.query(`TRUNCATE ${JOBS} CASCADE`);
  console.log(`filling ${database} with ${rows.toLocaleString('en')} jobs`);
  const pendingFrom = rows - Math.floor(rows / 100);
  for (let from = 1; from <= rows; from += CHUNK) {
    const to = Math.min(rows, from + CHUNK - 1);
    const started = Date.now();
    await client.query(insert, [from, to, pendingFrom, rows]);
    console.log(
      `  rows ${from.toLocaleString('en')}–${to.toLocaleString('en')} in ${Date.now() - started} ms`,
    );
  }
  const started = Date.now();
  await client.query(`VACUUM ANALYZE ${JOBS}`);
  console.log(`  VACUUM ANALYZE in ${Date.now() - started} ms`);
}

/** The jobs table's size with its indexes and TOAST, as pg_size_pretty gives it. */
export async function jobsTableSize(client: Client): Promise<string> {
  const { rows } = await client.query(
    `SELECT pg_size_pretty(pg_total_relation_size('${JOBS}')) AS size`,
  );
  return rows[0].size as string;
}

/** The nearest-rank percentile `p` (0-100) of `values`. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}
