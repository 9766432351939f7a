// The scratch apps' entry point (compat/run.sh copies it next to the README's files in src/; the
// same file compiles as CommonJS in nest11-cjs and as ESM in nest12-esm). It boots the README's
// AppModule on a database of its own, enqueues through the README's ReportsService, waits for the
// README's handler to complete the job, checks the transactional enqueue, and closes the app;
// then it runs the README's testing-kit file (`testReports`) on the same database.
// Needs DATABASE_URL (a PostgreSQL server where it may create and drop a database).
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { Injectable, Module, Scope } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import * as queuePackage from 'nest-pg-job-queue';
import {
  InjectJob,
  Job,
  JobHandler,
  JobQueueModule,
  JobStatus,
  QueueService,
} from 'nest-pg-job-queue';
import { Client } from 'pg';
import { DataSource } from 'typeorm';

const app = process.env.COMPAT_APP ?? 'app';
const expectEsm = process.env.COMPAT_MODULE === 'esm';
const serverUrl = process.env.DATABASE_URL;
const JOB_DEADLINE_MS = 30_000;
const RUN_DEADLINE_MS = 120_000;

async function admin(sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** In an ESM app, every export of the CommonJS package must also be a named ESM export. */
function namedExports(): string {
  const runningAsEsm = typeof require === 'undefined';
  assert.equal(
    runningAsEsm,
    expectEsm,
    `${app}: main.js runs as ${runningAsEsm ? 'ESM' : 'CommonJS'}`,
  );
  if (!runningAsEsm) return 'require() of the package';
  const namespace = queuePackage as unknown as Record<string, unknown>;
  assert.equal(Object.prototype.toString.call(namespace), '[object Module]');
  const moduleExports = namespace.default as Record<string, unknown>;
  const names = Object.keys(moduleExports).filter((name) => name !== '__esModule');
  const missing = names.filter((name) => namespace[name] !== moduleExports[name]);
  assert.deepEqual(missing, [], `exports Node's CommonJS detection missed: ${missing.join(', ')}`);
  return `ESM import of the package: ${names.length}/${names.length} exports named`;
}

async function main(): Promise<void> {
  if (!serverUrl) throw new Error('DATABASE_URL is not set');
  const exportsNote = namedExports();
  const database = `jq_compat_${app.replace(/\W/g, '_')}_${process.pid}`;
  await admin(`DROP DATABASE IF EXISTS ${database}`);
  await admin(`CREATE DATABASE ${database}`);
  try {
    const url = new URL(serverUrl);
    url.pathname = `/${database}`;
    // The README's AppModule reads DATABASE_URL when it is evaluated: point it at the fresh
    // database first, then load the README's files.
    process.env.DATABASE_URL = url.toString();
    const { AppModule } = await import('./app.module.js');
    const { ReportsService } = await import('./reports.service.js');

    const nest = await NestFactory.createApplicationContext(AppModule, {
      logger: ['error', 'warn'],
    });
    try {
      const reports = nest.get(ReportsService);
      const queue = nest.get(QueueService);

      const job = await reports.request('2026-11');
      const deadline = Date.now() + JOB_DEADLINE_MS;
      let current = await queue.getJob(job.id);
      while (current.status !== JobStatus.Completed) {
        assert.ok(
          current.status === JobStatus.Pending ||
            current.status === JobStatus.Claimed ||
            current.status === JobStatus.Running,
          `job ${job.id} is ${current.status}: ${current.lastError ?? ''}`,
        );
        assert.ok(
          Date.now() < deadline,
          `job ${job.id} still ${current.status} after ${JOB_DEADLINE_MS} ms`,
        );
        await new Promise((resolve) => setTimeout(resolve, 50));
        current = await queue.getJob(job.id);
      }
      assert.deepEqual(current.result, { rows: 1200 });

      await reports.requestWithOrder('2026-12');
      const dataSource = nest.get(DataSource);
      const audit: { message: string }[] = await dataSource.query(`SELECT message FROM audit_log`);
      assert.deepEqual(audit, [{ message: 'report 2026-12' }]);
      const rows: { id: string }[] = await dataSource.query(
        `SELECT id FROM job_queue.jobs WHERE job_type = 'report_generation' AND data->>'month' = '2026-12'`,
      );
      assert.equal(rows.length, 1, 'requestWithOrder enqueued one job');
      const delayed = await queue.getJob(rows[0].id);
      assert.equal(delayed.status, JobStatus.Scheduled);
      assert.ok(delayed.runAt instanceof Date, 'getJob(id).runAt is a Date');
      assert.ok(
        delayed.runAt.getTime() > Date.now() + 45_000,
        `delayed job runs at ${delayed.runAt.toISOString()}`,
      );

      console.log(
        `  ${app}: ${exportsNote}; audit_log row and delayed job ${delayed.id} ` +
          `(runs at ${delayed.runAt.toISOString()}) written in one transaction`,
      );
      console.log(
        `PASS compat ${app}: job ${job.id} completed from ${process.env.COMPAT_TARBALL} ` +
          `(NestJS ${process.env.COMPAT_NEST_VERSION})`,
      );
    } finally {
      await nest.close();
    }
    await runReadmeKit(database);
    await runRequestScoped(database);
    await checkEntryPoints(database);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

/**
 * The README's testing-kit file, through nest-pg-job-queue/testing, on a fresh database of its
 * own, as a user's test file would have: its module reads DATABASE_URL when it is loaded.
 */
async function runReadmeKit(database: string): Promise<void> {
  const kitDatabase = `${database}_kit`;
  await admin(`DROP DATABASE IF EXISTS ${kitDatabase}`);
  await admin(`CREATE DATABASE ${kitDatabase}`);
  try {
    const url = new URL(serverUrl as string);
    url.pathname = `/${kitDatabase}`;
    process.env.DATABASE_URL = url.toString();
    const { testReports } = await import('./reports.kit.js');
    await testReports();
    console.log(`PASS compat ${app}: the README's testing kit file (nest-pg-job-queue/testing)`);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${kitDatabase} WITH (FORCE)`);
  }
}

/** Request-scoped handler instances made so far, and the runs waiting for each other. */
let scopedInstances = 0;
const scopedArrived = new Set<string>();
let bothArrived: () => void = () => undefined;
const scopedMeet = new Promise<void>((resolve) => (bothArrived = resolve));

/** Resolved per run: each run waits until two are in the handler at once. */
@Injectable({ scope: Scope.REQUEST })
class CompatScopedHandler {
  private readonly instance = ++scopedInstances;

  constructor(@InjectJob() private readonly job: Job<{ n: number }>) {}

  @JobHandler('compat.scoped')
  async run(job: Job<{ n: number }>): Promise<{ instance: number; n: number; same: boolean }> {
    scopedArrived.add(job.id);
    if (scopedArrived.size === 2) bothArrived();
    await scopedMeet;
    return { instance: this.instance, n: this.job.data.n, same: this.job === job };
  }
}

/**
 * Request-scoped handlers from the tarball: two concurrent runs of a request-scoped provider get
 * two instances, each injected with its own job (`@InjectJob()`), and the README's
 * ScopedReportProcessor completes a job with its injected job's data.
 */
async function runRequestScoped(database: string): Promise<void> {
  const url = new URL(serverUrl as string);
  url.pathname = `/${database}`;
  const { ScopedReportProcessor } = await import('./scoped-report.processor.js');
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: url.toString(), retryAttempts: 0 }),
      JobQueueModule.forRoot({ worker: { concurrency: 4, pollIntervalMs: 50 } }),
    ],
    providers: [CompatScopedHandler, ScopedReportProcessor],
  })
  class ScopedModule {}

  const nest = await NestFactory.createApplicationContext(ScopedModule, { logger: ['error'] });
  try {
    const queue = nest.get(QueueService);
    const jobs = await queue.enqueueMany([
      { type: 'compat.scoped', data: { n: 1 } },
      { type: 'compat.scoped', data: { n: 2 } },
      { type: 'report_archive', data: { month: '2026-10' } },
    ]);
    const deadline = Date.now() + JOB_DEADLINE_MS;
    const done: Job[] = [];
    for (const { id } of jobs) {
      let job = await queue.getJob(id);
      while (job.status !== JobStatus.Completed) {
        assert.ok(job.status !== JobStatus.Failed, `job ${id} failed: ${job.lastError ?? ''}`);
        assert.ok(Date.now() < deadline, `job ${id} still ${job.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
        job = await queue.getJob(id);
      }
      done.push(job);
    }
    const [a, b, archived] = done.map((job) => job.result) as [
      { instance: number; n: number; same: boolean },
      { instance: number; n: number; same: boolean },
      { archived: string },
    ];
    assert.equal(scopedInstances, 2, 'one instance per run');
    assert.notEqual(a.instance, b.instance);
    assert.deepEqual([a.n, a.same, b.n, b.same], [1, true, 2, true]);
    assert.deepEqual(archived, { archived: '2026-10' });
    console.log(
      `PASS compat ${app}: a request-scoped handler resolved once per run ` +
        `(two concurrent runs, instances ${a.instance} and ${b.instance}, each with its own job)`,
    );
  } finally {
    await nest.close();
  }
}

/** The optional entry points and their peers (`compat/run.sh`'s apps install them, or not). */
const ENTRY_POINT_PEERS: Record<string, string> = {
  'nest-pg-job-queue/terminus': '@nestjs/terminus',
  'nest-pg-job-queue/prometheus': 'prom-client',
  'nest-pg-job-queue/opentelemetry': '@opentelemetry/api',
};

/**
 * With the peers installed (`COMPAT_PEERS=installed`), compat/observed.ts runs a job with the
 * three entry points and compat/dashboard.ts serves the dashboard over HTTP; without (`none`), importing each entry point fails with one error naming
 * the package to install, and the rest of this run has shown the main entry point unaffected.
 */
async function checkEntryPoints(database: string): Promise<void> {
  if (process.env.COMPAT_PEERS === 'installed') {
    const url = new URL(serverUrl as string);
    url.pathname = `/${database}`;
    // A specifier tsc does not resolve: the file is in the apps with the peers only.
    const observed = './observed.js';
    const { runObserved } = (await import(observed)) as {
      runObserved(url: string, app: string): Promise<void>;
    };
    await runObserved(url.toString(), app);
    const dashboard = './dashboard.js';
    const { runDashboard } = (await import(dashboard)) as {
      runDashboard(url: string, app: string): Promise<void>;
    };
    await runDashboard(url.toString(), app);
    const clsTransactional = './cls-transactional.js';
    const { runClsTransactional } = (await import(clsTransactional)) as {
      runClsTransactional(url: string, app: string): Promise<void>;
    };
    await runClsTransactional(url.toString(), app);
    return;
  }
  for (const [entryPoint, peer] of Object.entries(ENTRY_POINT_PEERS)) {
    await assert.rejects(import(entryPoint), (error: Error) => {
      assert.match(error.message, new RegExp(`npm install ${peer.replace('/', '\\/')}$`));
      return true;
    });
  }
  console.log(
    `PASS compat ${app}: no optional peer installed; the main entry point works, and each of ` +
      `${Object.keys(ENTRY_POINT_PEERS).join(', ')} says which package to install`,
  );
}

// A hung boot or shutdown fails the run instead of stalling CI (the database is left behind then).
setTimeout(() => {
  console.error(`FAIL compat ${app}: still running after ${RUN_DEADLINE_MS} ms`);
  process.exit(1);
}, RUN_DEADLINE_MS).unref();

main().catch((error: unknown) => {
  console.error(`FAIL compat ${app}:`, error);
  process.exit(1);
});
