/**
 * `QueueService.stats()` on a big table: p50/p95 of the call as an app makes it (the snapshot),
 * of an exact count (`maxAgeMs: 0`), and what 400 callers of `stats()` at once, without pause, do
 * to the enqueue → completed time of jobs a worker runs meanwhile.
 *
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register bench/job-stats.ts \
 *     [--rows=1000000] [--calls=500] [--jobs=40] [--reuse] [--keep]
 *
 * DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres) names a server on which
 * this may CREATE DATABASE; the table is built in `jqstats_<rows>` (97% completed, 1% failed,
 * 1% cancelled, the newest 1% pending, four types; VACUUM ANALYZE) and dropped after unless
 * --keep; --reuse takes that database as a previous --keep left it.
 *
 * Two apps in this process on the library's source: a worker (default options, a no-op handler,
 * its stats refresher running) and an enqueue-only producer whose `stats()` is measured. The jobs
 * timed are enqueued one at a time by the producer; "completed" is when `getJob` first reads them
 * completed (polled every 5 ms). The 400 callers run in a child process, an enqueue-only app of
 * their own, each calling again as soon as its call returns.
 */
import 'reflect-metadata';
import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { fork } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { JobHandler, JobQueueModule, jobQueueMigrations, QueueService } from 'nest-pg-job-queue';

import {
  dropBenchDatabase,
  fillJobs,
  jobsTableSize,
  openBenchDatabase,
  percentile,
  urlOf,
} from './lib/big-table';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { JOBS } = require('./lib/schema') as { JOBS: string };

const JOB_TYPE = 'bench.stats';
const PARALLEL = 400;

interface Args {
  rows: number;
  calls: number;
  jobs: number;
  reuse: boolean;
  keep: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { rows: 1_000_000, calls: 500, jobs: 40, reuse: false, keep: false };
  for (const arg of argv) {
    const [name, value] = arg.split('=');
    if (name === '--rows') args.rows = Number(value);
    else if (name === '--calls') args.calls = Number(value);
    else if (name === '--jobs') args.jobs = Number(value);
    else if (arg === '--reuse') args.reuse = true;
    else if (arg === '--keep') args.keep = true;
    else throw new Error(`unknown argument ${arg}`);
  }
  if (!Number.isInteger(args.rows) || args.rows < 1_000 || args.rows > 50_000_000) {
    throw new Error('--rows: 1,000 to 50,000,000');
  }
  if (!Number.isInteger(args.calls) || args.calls < 20 || args.calls > 100_000) {
    throw new Error('--calls: 20 to 100,000');
  }
  if (!Number.isInteger(args.jobs) || args.jobs < 5 || args.jobs > 10_000) {
    throw new Error('--jobs: 5 to 10,000');
  }
  return args;
}

/** Mostly finished jobs, the newest 1% pending, in four types; one row per second of age. */
const FILL = `INSERT INTO ${JOBS} (job_type, status, data, attempts, run_token, completed_at,
                        created_at, updated_at, run_at)
   SELECT 'type.' || (g % 4), s.status, jsonb_build_object('i', g),
          CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
          CASE WHEN s.status = 'pending' THEN 0 ELSE 1 END,
          CASE WHEN s.status = 'pending' THEN NULL ELSE s.at END, s.at, s.at, s.at
   FROM generate_series($1::bigint, $2::bigint) AS g
   CROSS JOIN LATERAL (
     SELECT CASE WHEN g >= $3 THEN 'pending' WHEN g % 100 = 1 THEN 'failed'
                 WHEN g % 100 = 2 THEN 'cancelled' ELSE 'completed' END AS status,
            now() - ($4::bigint - g) * interval '1 second' AS at
   ) AS s`;

const fmt = (ms: number) => (ms >= 100 ? ms.toFixed(0) : ms.toFixed(2));
const summary = (times: number[]) =>
  `p50 ${fmt(percentile(times, 50))} ms, p95 ${fmt(percentile(times, 95))} ms, max ${fmt(
    Math.max(...times),
  )} ms (${times.length} calls)`;

async function timed(n: number, call: () => Promise<unknown>): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  return times;
}

/** Enqueue → completed of `n` jobs one after another, ms each. */
async function enqueueToCompleted(queue: QueueService, n: number): Promise<number[]> {
  return timed(n, async () => {
    const job = await queue.enqueue(JOB_TYPE, {});
    const deadline = Date.now() + 120_000;
    while ((await queue.getJob(job.id)).status !== 'completed') {
      if (Date.now() > deadline) throw new Error(`job ${job.id} did not complete in 120 s`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  });
}

/** `PARALLEL` callers of `call`, each calling again as soon as it returns, until stopped. */
function hammer(call: () => Promise<unknown>): { stop: () => Promise<number> } {
  let running = true;
  let calls = 0;
  const loops = Array.from({ length: PARALLEL }, async () => {
    while (running) {
      await call();
      calls++;
    }
  });
  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
      return calls;
    },
  };
}

/**
 * The callers run in a process of their own (an enqueue-only app), as a dashboard's would: their
 * event loop is not the worker's. Resolves once they call; `stop()` gives their call count.
 */
async function hammerElsewhere(
  url: string,
  maxAgeMs: number | undefined,
): Promise<{ stop: () => Promise<number> }> {
  const child = fork(__filename, [`--hammer=${url}`, `--max-age=${maxAgeMs ?? ''}`], {
    execArgv: process.execArgv,
  });
  const message = (kind: string) =>
    new Promise<{ kind: string; calls?: number }>((resolve, reject) => {
      child.once('error', reject);
      child.on('message', (m: { kind: string; calls?: number }) => {
        if (m.kind === kind) resolve(m);
      });
    });
  await message('calling');
  return {
    stop: async () => {
      child.send('stop');
      const { calls } = await message('stopped');
      return calls ?? 0;
    },
  };
}

/** The child of `hammerElsewhere`. */
async function hammerChild(url: string, maxAge: string): Promise<void> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url }),
      JobQueueModule.forRoot({ worker: false }),
    ],
  })
  class CallerModule {}
  const app = await NestFactory.createApplicationContext(CallerModule, { logger: ['error'] });
  const queue = app.get(QueueService);
  const opts = maxAge === '' ? {} : { maxAgeMs: Number(maxAge) };
  const calls = hammer(() => queue.stats(opts));
  process.send!({ kind: 'calling' });
  process.once('message', async () => {
    const n = await calls.stop();
    await app.close();
    process.send!({ kind: 'stopped', calls: n }, () => process.exit(0));
  });
}

@Injectable()
class NoopHandler {
  @JobHandler(JOB_TYPE)
  async run(): Promise<void> {}
}

async function main(): Promise<void> {
  const hammerArg = process.argv.find((arg) => arg.startsWith('--hammer='));
  if (hammerArg) {
    const maxAge = process.argv.find((arg) => arg.startsWith('--max-age='))!.slice(10);
    return hammerChild(hammerArg.slice(9), maxAge);
  }
  const args = parseArgs(process.argv.slice(2));
  // Not jqbench_*: the bench drops those it takes for leftovers of a killed run.
  const database = `jqstats_${args.rows}`;
  const url = urlOf(database);
  await openBenchDatabase(database, args.reuse);

  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url,
        migrations: jobQueueMigrations,
        migrationsRun: true,
      }),
      JobQueueModule.forRoot(),
    ],
    providers: [NoopHandler],
  })
  class WorkerModule {}

  @Module({
    imports: [
      TypeOrmModule.forRoot({ name: 'producer', type: 'postgres', url }),
      JobQueueModule.forRoot({ dataSource: 'producer', worker: false }),
    ],
  })
  class ProducerModule {}

  const client = new Client({ connectionString: url });
  await client.connect();
  const worker = await NestFactory.createApplicationContext(WorkerModule, {
    logger: ['error', 'warn'],
  });
  const producer = await NestFactory.createApplicationContext(ProducerModule, {
    logger: ['error', 'warn'],
  });
  try {
    const queue = producer.get(QueueService);
    await fillJobs(client, { database, rows: args.rows, exact: false, insert: FILL });
    const size = await jobsTableSize(client);
    const lines: string[] = [
      `stats() on ${args.rows.toLocaleString('en')} jobs (${size}); load average at start ` +
        loadavg()
          .map((v) => v.toFixed(2))
          .join(' '),
    ];
    const report = (line: string) => {
      console.log(`  ${line}`);
      lines.push(line);
    };

    const exact = await timed(Math.min(10, args.calls), () => queue.stats({ maxAgeMs: 0 }));
    report(`stats({ maxAgeMs: 0 }), an exact count each: ${summary(exact)}`);
    const { count_ms: countMs } = (
      await client.query<{ count_ms: number }>(`SELECT count_ms FROM job_queue.job_stats`)
    ).rows[0];
    report(`last count by the database's clock: ${fmt(countMs)} ms`);
    report(`stats(), the snapshot: ${summary(await timed(args.calls, () => queue.stats()))}`);

    const quiet = await enqueueToCompleted(queue, args.jobs);
    report(`enqueue → completed, nothing else running: ${summary(quiet)}`);

    const cheap = await hammerElsewhere(url, undefined);
    const underCheap = await enqueueToCompleted(queue, args.jobs);
    const cheapCalls = await cheap.stop();
    report(
      `enqueue → completed, ${PARALLEL} callers of stats() meanwhile (${cheapCalls.toLocaleString('en')} calls): ` +
        summary(underCheap),
    );

    const costly = await hammerElsewhere(url, 0);
    const underExact = await enqueueToCompleted(queue, args.jobs);
    const exactCalls = await costly.stop();
    report(
      `enqueue → completed, ${PARALLEL} callers of stats({ maxAgeMs: 0 }) meanwhile ` +
        `(${exactCalls.toLocaleString('en')} calls, one count at a time): ${summary(underExact)}`,
    );
    lines.push(
      `load average at end ${loadavg()
        .map((v) => v.toFixed(2))
        .join(' ')}`,
    );
    console.log(`\n${lines.join('\n')}`);
  } finally {
    await producer.close();
    await worker.close();
    await client.end().catch(() => undefined);
    if (!args.keep) {
      await dropBenchDatabase(database);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
