/**
 * The example's `GET /jobs` (src/jobs/jobs.controller.ts, keyset pagination) on a big table:
 * p50/p95/max of the HTTP round trip for the first page and a deep page, with and without
 * filters, plus the plan PostgreSQL runs for exactly the statement TypeORM sent.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/example-listing.ts \
 *     [--rows=1000000] [--requests=200] [--reuse] [--keep]
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which
 * this may CREATE DATABASE; the table is built in `jqlisting_<rows>` (INSERT … SELECT
 * generate_series, then VACUUM ANALYZE) and dropped after unless --keep; --reuse takes that
 * database as a previous --keep left it. The route lists through `QueueService.listJobs`, so
 * this measures the library's listing (and its `jobs_list_idx`) behind HTTP, Nest and the DTOs.
 *
 * The app is the example's JobsModule, guard and error filter on the library's source (the
 * tsconfig path), worker off, so nothing changes the rows while they are listed.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { APP_FILTER, NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { performance } from 'node:perf_hooks';
import { Logger as TypeOrmLogger } from 'typeorm';
import { Job, JobQueueModule, jobQueueMigrations } from 'nest-pg-job-queue';
import { HttpErrorFilter } from '../src/common/http-error.filter';
import { ADMIN_TOKEN_ENV } from '../src/common/admin-token.guard';
import { JobsModule } from '../src/jobs/jobs.module';

/** The library's table as SQL (change with the library's schema; see bench/lib/schema.js). */
import {
  dropBenchDatabase,
  fillJobs,
  jobsTableSize,
  openBenchDatabase,
  percentile,
  urlOf,
} from './lib/big-table';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { JOBS } = require('./lib/schema') as {
  JOBS: string;
};

const TOKEN = 'listing-bench-token';
const WARMUP = 20;

interface Args {
  rows: number;
  requests: number;
  reuse: boolean;
  keep: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { rows: 1_000_000, requests: 200, reuse: false, keep: false };
  for (const arg of argv) {
    const [name, value] = arg.split('=');
    if (name === '--rows') args.rows = Number(value);
    else if (name === '--requests') args.requests = Number(value);
    else if (arg === '--reuse') args.reuse = true;
    else if (arg === '--keep') args.keep = true;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(args.rows) || args.rows < 1_000 || args.rows > 50_000_000) {
    throw new Error('--rows: 1,000 to 50,000,000');
  }
  if (!Number.isInteger(args.requests) || args.requests < 20 || args.requests > 10_000) {
    throw new Error('--requests: 20 to 10,000');
  }
  return args;
}

/**
 * The table an operator lists: the newest 1% still pending (a recent backlog), else 95% completed
 * (result set), 3% failed (an error with a stack), 1% cancelled (in cycles over the ids, so spread
 * through the whole table); 70% image.process, 20% report_generation, 10% email.send, and one row
 * in 10,000 of `audit.rare` (a filter value that is rare). One row per second of created_at.
 */
const FILL = `INSERT INTO ${JOBS} (job_type, status, data, priority, attempts, run_token, worker_id,
                        claimed_at, started_at, completed_at, heartbeat_at, created_at,
                        updated_at, run_at, result, last_error, progress)
   SELECT s.job_type, s.status, jsonb_build_object('name', 'img-' || g || '.png'), 100,
          CASE WHEN s.status IN ('completed', 'failed') THEN 1 ELSE 0 END,
          CASE WHEN s.status IN ('completed', 'failed') THEN 1 ELSE 0 END,
          CASE WHEN s.status IN ('completed', 'failed') THEN 'web-1:42:abc' END,
          CASE WHEN s.status IN ('completed', 'failed') THEN s.at END,
          CASE WHEN s.status IN ('completed', 'failed') THEN s.at END,
          CASE WHEN s.status IN ('completed', 'failed', 'cancelled') THEN s.at END,
          CASE WHEN s.status IN ('completed', 'failed') THEN s.at END,
          s.at, s.at, s.at,
          CASE WHEN s.status = 'completed' THEN jsonb_build_object('thumbnail', 'thumb-' || g || '.png') END,
          CASE WHEN s.status = 'failed'
               THEN E'Error: thumbnail service answered 503\\n    at Thumbnailer.render (/srv/app/dist/thumbs.js:41:11)' END,
          CASE WHEN s.status = 'completed' THEN 100 ELSE 0 END
   FROM generate_series($1::bigint, $2::bigint) AS g
   CROSS JOIN LATERAL (
     SELECT CASE WHEN g % 10000 = 1234 THEN 'audit.rare'
                 WHEN abs(hashint8(g)::bigint) % 100 < 70 THEN 'image.process'
                 WHEN abs(hashint8(g)::bigint) % 100 < 90 THEN 'report_generation'
                 ELSE 'email.send' END AS job_type,
            CASE WHEN g >= $3 THEN 'pending'
                 WHEN g % 100 < 3 THEN 'failed'
                 WHEN g % 100 = 3 THEN 'cancelled'
                 ELSE 'completed' END AS status,
            now() - ($4::bigint - g) * interval '1 second' AS at
   ) AS s`;

/** The last statement TypeORM sent that reads the jobs table, with its parameters. */
class CapturingLogger implements TypeOrmLogger {
  last: { query: string; parameters: unknown[] } | undefined;
  logQuery(query: string, parameters?: unknown[]): void {
    if (/^SELECT/i.test(query) && /"jobs"|\bjobs\b/.test(query)) {
      this.last = { query, parameters: parameters ?? [] };
    }
  }
  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}

interface Case {
  name: string;
  query: Record<string, string>;
  /** Rows of the filter to skip before the page: 0 the first page, else a cursor that deep. */
  skip: (filtered: number) => number;
  /** The filter as SQL, to find that cursor's id. */
  where: string;
}

const CASES: Case[] = [];
for (const [label, query, where] of [
  ['no filter', {}, 'true'],
  ['status=failed (3%)', { status: 'failed' }, `status = 'failed'`],
  ['type=report_generation (20%)', { type: 'report_generation' }, `job_type = 'report_generation'`],
  [
    'status=failed&type=email.send (0.3%)',
    { status: 'failed', type: 'email.send' },
    `status = 'failed' AND job_type = 'email.send'`,
  ],
  ['status=pending (1%, newest)', { status: 'pending' }, `status = 'pending'`],
  ['type=audit.rare (0.01%)', { type: 'audit.rare' }, `job_type = 'audit.rare'`],
] as Array<[string, Record<string, string>, string]>) {
  CASES.push({ name: `${label}: first page`, query, skip: () => 0, where });
  CASES.push({
    name: `${label}: deep page`,
    query,
    // "After 500k rows" of a million: half the rows the filter lets through.
    skip: (filtered) => Math.floor(filtered / 2),
    where,
  });
}

interface PlanSummary {
  ms: number;
  scan: string;
  removed: number;
  buffers: number;
}

/** EXPLAIN (ANALYZE, BUFFERS) of the statement as TypeORM sent it. */
async function explain(client: Client, query: string, parameters: unknown[]): Promise<PlanSummary> {
  const { rows } = await client.query(
    `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${query}`,
    parameters,
  );
  const root = (rows[0] as { 'QUERY PLAN': Array<{ Plan: PlanNode; 'Execution Time': number }> })[
    'QUERY PLAN'
  ][0];
  const scans: string[] = [];
  let removed = 0;
  const walk = (node: PlanNode) => {
    if (/Scan/.test(node['Node Type'])) {
      const parallel = node['Parallel Aware'] ? 'Parallel ' : '';
      scans.push(
        `${parallel}${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''}`,
      );
    }
    // Per loop (a parallel scan's loops are its processes): the total is times the loops.
    removed += (node['Rows Removed by Filter'] ?? 0) * (node['Actual Loops'] ?? 1);
    for (const child of node.Plans ?? []) walk(child);
  };
  walk(root.Plan);
  return {
    ms: root['Execution Time'],
    scan: scans.join(' + '),
    removed,
    buffers: (root.Plan['Shared Hit Blocks'] ?? 0) + (root.Plan['Shared Read Blocks'] ?? 0),
  };
}

interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Rows Removed by Filter'?: number;
  'Actual Loops'?: number;
  'Parallel Aware'?: boolean;
  'Shared Hit Blocks'?: number;
  'Shared Read Blocks'?: number;
  Plans?: PlanNode[];
}

async function measure(
  baseUrl: string,
  client: Client,
  logger: CapturingLogger,
  args: Args,
): Promise<string[][]> {
  const table: string[][] = [];
  for (const c of CASES) {
    const filtered = Number(
      (await client.query(`SELECT count(*) AS n FROM ${JOBS} WHERE ${c.where}`)).rows[0].n,
    );
    const skip = c.skip(filtered);
    let cursor: string | undefined;
    if (skip > 0) {
      const { rows } = await client.query(
        `SELECT id::text AS id FROM ${JOBS} WHERE ${c.where} ORDER BY id DESC OFFSET $1 LIMIT 1`,
        [skip - 1],
      );
      // The cursor listJobs would give after that row (base64url of {"id":"<id>"}).
      cursor = Buffer.from(JSON.stringify({ id: rows[0].id })).toString('base64url');
    }
    const params = new URLSearchParams({ ...c.query, ...(cursor && { cursor }) });
    const url = `${baseUrl}/jobs?${params}`;
    const times: number[] = [];
    let items = 0;
    for (let i = 0; i < WARMUP + args.requests; i++) {
      const t0 = performance.now();
      const response = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
      const body = (await response.json()) as { items: unknown[] };
      const ms = performance.now() - t0;
      if (response.status !== 200)
        throw new Error(`${c.name}: ${response.status} ${JSON.stringify(body)}`);
      items = body.items.length;
      if (i >= WARMUP) times.push(ms);
    }
    const sent = logger.last!;
    const plan = await explain(client, sent.query, sent.parameters);
    const row = [
      c.name,
      `${skip.toLocaleString('en')} of ${filtered.toLocaleString('en')}`,
      String(items),
      percentile(times, 50).toFixed(2),
      percentile(times, 95).toFixed(2),
      Math.max(...times).toFixed(1),
      plan.ms.toFixed(2),
      plan.scan,
      plan.removed.toLocaleString('en'),
    ];
    console.log(`  ${row.join(' | ')}`);
    table.push(row);
  }
  return table;
}

function render(rows: string[][]): string {
  const headers = [
    'case',
    'skipped',
    'items',
    'p50 ms',
    'p95 ms',
    'max ms',
    'SQL ms',
    'scan',
    'rows filtered out',
  ];
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (i === 0 || i === 7 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])))
      .join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  // Not jqbench_*: the bench drops those it takes for leftovers of a killed run.
  const database = `jqlisting_${args.rows}`;
  const url = urlOf(database);
  await openBenchDatabase(database, args.reuse);

  process.env[ADMIN_TOKEN_ENV] = TOKEN;
  const logger = new CapturingLogger();
  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        entities: [Job],
        migrations: jobQueueMigrations,
        migrationsRun: true,
        logging: ['query'],
        logger,
      }),
      JobQueueModule.forRoot({ isGlobal: true, worker: false }),
      JobsModule,
    ],
    providers: [{ provide: APP_FILTER, useClass: HttpErrorFilter }],
  })
  class ListingBenchModule {}

  const app = await NestFactory.create(ListingBenchModule, { logger: ['error', 'warn'] });
  const client = new Client({ connectionString: url });
  try {
    await app.listen(0, '127.0.0.1');
    const baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    await client.connect();
    await fillJobs(client, { database, rows: args.rows, exact: true, insert: FILL });
    const size = await jobsTableSize(client);
    const title = (what: string) =>
      `\nGET /jobs?limit=50 on ${args.rows.toLocaleString('en')} jobs (${size}), ${what}: ` +
      `${args.requests} requests each after ${WARMUP} warm-up, HTTP round trip (ms)`;
    console.log(`measuring (${title("the library's indexes").trim()})`);
    const before = await measure(baseUrl, client, logger, args);
    console.log(`${title("the library's indexes")}\n${render(before)}`);
  } finally {
    await client.end().catch(() => undefined);
    await app.close();
    if (!args.keep) {
      await dropBenchDatabase(database);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
