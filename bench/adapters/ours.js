'use strict';
// Our library, run the way an app runs it: the packed package (installed by run.sh into
// bench/node_modules under its name) inside a Nest application context booted with
// TypeOrmModule.forRoot + JobQueueModule.forRoot and a provider with a no-op @JobHandler.
// Decorators are applied by hand: this is plain JavaScript, as a user's compiled code is.
require('reflect-metadata');
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { Client } = require('pg');
const { packageDir } = require('../lib/packages');
const { JOBS, qualified } = require('../lib/schema');

const JOB_TYPE = 'bench.noop';

/** Today's build, where run.sh unpacks it. */
const TODAY = path.join(__dirname, '..', 'node_modules', 'nest-pg-job-queue');
/** The baseline's (main.js --baseline; inherited by worker processes): variants `<name>@base`. */
const BASELINE = process.env.BENCH_BASELINE_PACKAGE;

/**
 * `nest-pg-job-queue` (or a subpath) from the copy in `queueDir`, resolved as a bare name from
 * the folder above its node_modules so that the package's `exports` apply. The walk up from the
 * baseline's folder reaches bench/node_modules too: a file found outside `queueDir` is refused,
 * so `ours@base` can never run today's build by mistake.
 */
function requireQueue(queueDir, subpath = '') {
  let file;
  try {
    file = require.resolve(`nest-pg-job-queue${subpath}`, {
      paths: [path.dirname(path.dirname(queueDir))],
    });
  } catch (error) {
    throw new Error(
      `nest-pg-job-queue is not installed at ${queueDir}: run the bench through bench/run.sh (${error.message})`,
    );
  }
  if (!file.startsWith(fs.realpathSync(queueDir) + path.sep)) {
    throw new Error(`nest-pg-job-queue${subpath} resolved to ${file}, outside ${queueDir}`);
  }
  return require(file);
}

/** The library (its copy in `queueDir`) and the app's packages, one copy shared by both builds. */
function load(queueDir = TODAY) {
  return {
    queue: requireQueue(queueDir),
    NestFactory: require('@nestjs/core').NestFactory,
    common: require('@nestjs/common'),
    TypeOrmModule: require('@nestjs/typeorm').TypeOrmModule,
  };
}

/**
 * Boots one application context; `onJob` set: with the worker and a no-op handler. A producer
 * gets a named data source (`dataSource` option), so that a producer and a worker application
 * can live in one process (the latency measurement) without sharing the default name.
 */
async function bootApp(
  url,
  {
    moduleOptions,
    onJob,
    hold,
    logLine,
    perKey,
    observe,
    transaction = false,
    migrationsRun = false,
    name,
    queueDir = TODAY,
  },
) {
  const { queue, NestFactory, common, TypeOrmModule } = load(queueDir);
  const providers = [];
  if (onJob) {
    class BenchHandlers {
      async noop(job, ctx) {
        if (logLine) ctx.log('bench line', { n: 1 });
        onJob(job.data, job);
        if (hold) await holdUntilAborted(job, ctx, hold);
      }
    }
    common.Injectable()(BenchHandlers);
    const handlerOptions = {
      ...(perKey ? { concurrencyPerKey: perKey.limit } : {}),
      ...(transaction ? { transaction: true } : {}),
    };
    queue.JobHandler(JOB_TYPE, handlerOptions)(
      BenchHandlers.prototype,
      'noop',
      Object.getOwnPropertyDescriptor(BenchHandlers.prototype, 'noop'),
    );
    providers.push(BenchHandlers);
  }
  class BenchModule {}
  common.Module({
    imports: [
      TypeOrmModule.forRoot({
        ...(name ? { name } : {}),
        type: 'postgres',
        url,
        // A transactional run holds a connection for the run: the pool the queue's warning asks.
        ...(transaction ? { poolSize: moduleOptions.worker.concurrency + 1 } : {}),
        migrations: queue.jobQueueMigrations,
        migrationsRun,
      }),
      queue.JobQueueModule.forRoot(
        onJob ? moduleOptions : { worker: false, ...(name ? { dataSource: name } : {}) },
      ),
      ...observedModules(observe, queueDir),
    ],
    providers,
  })(BenchModule);
  const app = await NestFactory.createApplicationContext(BenchModule, {
    logger: ['error', 'warn'],
  });
  return { app, queueService: app.get(queue.QueueService) };
}

/**
 * The metrics and tracing entry points' modules, as an app that runs them imports them: metrics
 * on a registry of their own (scraped by nobody: recording is the cost), traces through an SDK
 * tracer provider that samples every span and exports none (making spans is the cost).
 * `otelSdk` alone sets the SDK up without the queue's module, as in an app whose requests are
 * traced: once a context is made active, Node's AsyncLocalStorage follows every promise of the
 * process, whoever made it, and that is a cost of the SDK's, not of the queue's spans.
 */
function observedModules(observe, queueDir) {
  const modules = [];
  if (observe?.metrics) {
    const { Registry } = require('prom-client');
    const { JobQueueMetricsModule } = requireQueue(queueDir, '/prometheus');
    modules.push(JobQueueMetricsModule.forRoot({ registry: new Registry() }));
  }
  if (observe?.otelSdk || observe?.tracing) {
    const api = require('@opentelemetry/api');
    const {
      BasicTracerProvider,
      ParentBasedSampler,
      TraceIdRatioBasedSampler,
    } = require('@opentelemetry/sdk-trace-base');
    const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
    const { W3CTraceContextPropagator } = require('@opentelemetry/core');
    // `sampled`: a root span of ten kept, the rest not recorded (as production tracing often runs).
    const sampler = observe.sampled
      ? new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(0.1) })
      : undefined;
    api.trace.setGlobalTracerProvider(new BasicTracerProvider(sampler ? { sampler } : {}));
    api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    // What a traced request does first: a context made active.
    api.context.with(
      api.trace.setSpan(api.context.active(), api.trace.getTracer('app').startSpan('boot')),
      () => undefined,
    );
  }
  if (observe?.tracing) {
    const { JobQueueTracingModule } = requireQueue(queueDir, '/opentelemetry');
    modules.push(JobQueueTracingModule.forRoot());
  }
  return modules;
}

/** A handler that runs until its signal aborts (the cancel measurement), telling `hold` both. */
function holdUntilAborted(job, ctx, hold) {
  return new Promise((resolve) => {
    ctx.signal.addEventListener(
      'abort',
      () => {
        hold.onAbort(job.id, ctx.signal.reason && ctx.signal.reason.name);
        resolve();
      },
      { once: true },
    );
    hold.onStart(job.id);
  });
}

async function sqlCounter(url, sql) {
  const client = new Client({ connectionString: url });
  await client.connect();
  return {
    count: async () => Number((await client.query(sql)).rows[0].n),
    close: () => client.end(),
  };
}

/**
 * Counts and times, in this (worker) process, the statements the library sends, by kind: the
 * pg driver the library's TypeORM uses is wrapped (round trip, as the library waits for it);
 * the library itself is untouched.
 */
function instrument() {
  const pg = require(require.resolve('pg', { paths: [packageDir('typeorm')] }));
  const stats = {};
  const original = pg.Client.prototype.query;
  pg.Client.prototype.query = function timedQuery(config, ...rest) {
    const text = typeof config === 'string' ? config : config && config.text;
    const result = original.call(this, config, ...rest);
    if (typeof text === 'string') {
      const entry = (stats[statementKind(text)] ??= { count: 0, ms: 0 });
      entry.count++;
      if (result && typeof result.then === 'function') {
        const t0 = performance.now();
        result.then(
          () => (entry.ms += performance.now() - t0),
          () => (entry.ms += performance.now() - t0),
        );
      }
    }
    return result;
  };
  return () =>
    Object.fromEntries(
      Object.entries(stats).map(([kind, { count, ms }]) => [
        kind,
        { count, ms: Math.round(ms), msEach: Number((ms / count).toFixed(3)) },
      ]),
    );
}

const kinds = new Map();

/** A short name for a statement (its text is constant per call site, so cached). */
function statementKind(text) {
  let kind = kinds.get(text);
  if (kind === undefined) {
    kind = classify(text);
    if (kinds.size < 1000) kinds.set(text, kind);
  }
  return kind;
}

function classify(text) {
  const sql = text.replace(/\s+/g, ' ').trim();
  if (/claim_job_batch/i.test(sql)) return 'claim_job_batch';
  if (/SET status = 'running'/i.test(sql)) return 'mark running';
  // The table's name with or without its schema, quoted or not.
  if (/^UPDATE (\S+\.)?"?jobs"? AS j SET status = o\.status/i.test(sql)) return 'finish (batched)';
  if (/^UPDATE (\S+\.)?"?jobs"? AS j SET status = 'completed'/i.test(sql)) {
    return 'complete (batched)';
  }
  if (/SET heartbeat_at = (pg_catalog\.)?now\(\)/i.test(sql)) return 'heartbeat';
  if (/pg_try_advisory_xact_lock|pg_try_advisory_lock/i.test(sql)) return 'reaper';
  if (/^(UN)?LISTEN/i.test(sql)) return 'listen';
  return sql.slice(0, 40);
}

const variant = (name, worker, summary, skip = [], moduleOptions = {}, handler = {}) => ({
  name,
  summary,
  moduleOptions: { worker, ...moduleOptions },
  skip,
  queueDir: TODAY,
  // Indexes of the library's dropped after its migrations ran: what they cost its writes.
  dropIndexes: handler.dropIndexes ?? [],
  logLine: handler.logLine === true,
  // `{ keys, limit }`: the handler has `concurrencyPerKey: limit`, the jobs take turns over
  // `keys` concurrency keys.
  perKey: handler.perKey,
  // `{ metrics?, tracing? }`: the worker's app also imports those entry points' modules.
  observe: handler.observe,
  // The handler has `transaction: true` (its completion written in the run's transaction).
  transaction: handler.transaction === true,
});

// Variants that differ only in their worker share the producer side: enqueue and bulk are
// measured once per library (SAME_PRODUCER).
const SAME_PRODUCER = ['enqueue', 'bulk'];

/** The indexes only `listJobs` reads (migration AddJobListIndexes). */
const LISTING_INDEXES = ['jobs_list_idx', 'jobs_unique_key_prefix_idx'];

module.exports = {
  variants: [
    variant(
      'ours',
      { concurrency: 50 },
      'JobQueueModule, worker concurrency 50, other options default (prefetch auto)',
    ),
    variant(
      'ours-c10',
      { concurrency: 10 },
      'JobQueueModule with default options (concurrency 10, prefetch auto)',
      SAME_PRODUCER,
    ),
    variant(
      'ours-c200',
      { concurrency: 200 },
      'JobQueueModule, worker concurrency 200, other options default (prefetch auto)',
      [...SAME_PRODUCER, 'latency'],
    ),
    // The same with nothing held ahead of the slots (prefetch 0, the default before 'auto').
    variant(
      'ours-p0',
      { concurrency: 50, prefetch: 0 },
      'JobQueueModule, worker concurrency 50, prefetch 0 (claims only for free slots)',
      SAME_PRODUCER,
    ),
    variant(
      'ours-c10-p0',
      { concurrency: 10, prefetch: 0 },
      'JobQueueModule, worker concurrency 10, prefetch 0',
      SAME_PRODUCER,
    ),
    variant(
      'ours-c200-p0',
      { concurrency: 200, prefetch: 0 },
      'JobQueueModule, worker concurrency 200, prefetch 0',
      [...SAME_PRODUCER, 'latency'],
    ),
    variant(
      'ours-prefetch',
      { concurrency: 50, prefetch: 200 },
      'JobQueueModule, worker concurrency 50 and prefetch 200 (claims up to 200 ahead)',
      SAME_PRODUCER,
    ),
    // What remote job events (a NOTIFY per claim, progress and outcome statement) cost.
    variant(
      'ours-events',
      { concurrency: 50 },
      'as ours, with events.remote true (a job-event NOTIFY per claim and outcome write)',
      SAME_PRODUCER,
      { events: { remote: true } },
    ),
    variant(
      'ours-prefetch-events',
      { concurrency: 50, prefetch: 200 },
      'as ours-prefetch, with events.remote true',
      SAME_PRODUCER,
      { events: { remote: true } },
    ),
    // What the job log costs: every run's claimed and completed rows, or one ctx.log line a job.
    variant(
      'ours-log',
      { concurrency: 50 },
      'as ours, with events.logCompletedRuns true (each run writes its claimed and completed rows)',
      SAME_PRODUCER,
      { events: { logCompletedRuns: true } },
    ),
    variant(
      'ours-prefetch-log',
      { concurrency: 50, prefetch: 200 },
      'as ours-prefetch, with events.logCompletedRuns true',
      SAME_PRODUCER,
      { events: { logCompletedRuns: true } },
    ),
    variant(
      'ours-log-events',
      { concurrency: 50 },
      'as ours, with events.logCompletedRuns and events.remote true (both on)',
      SAME_PRODUCER,
      { events: { logCompletedRuns: true, remote: true } },
    ),
    variant(
      'ours-log-line',
      { concurrency: 50 },
      'as ours, the handler calling ctx.log once (its line, claimed and completed rows)',
      SAME_PRODUCER,
      {},
      { logLine: true },
    ),
    variant(
      'ours-prefetch-log-line',
      { concurrency: 50, prefetch: 200 },
      'as ours-prefetch, the handler calling ctx.log once',
      SAME_PRODUCER,
      {},
      { logLine: true },
    ),
    // What the metrics and tracing entry points cost in the worker (issue: at most 5%).
    variant(
      'ours-metrics',
      { concurrency: 50 },
      'as ours, with JobQueueMetricsModule (prom-client counters and histograms per run)',
      SAME_PRODUCER,
      {},
      { observe: { metrics: true } },
    ),
    variant(
      'ours-otel-sdk',
      { concurrency: 50 },
      'as ours, in an app with the OpenTelemetry SDK set up and a context once active, no queue spans',
      SAME_PRODUCER,
      {},
      { observe: { otelSdk: true } },
    ),
    variant(
      'ours-traced',
      { concurrency: 50 },
      'as ours, with JobQueueTracingModule and an SDK tracer provider (a span per run, none exported)',
      SAME_PRODUCER,
      {},
      { observe: { tracing: true } },
    ),
    variant(
      'ours-traced-sampled',
      { concurrency: 50 },
      'as ours-traced, the SDK sampling one root span in ten (ParentBased, TraceIdRatio 0.1)',
      SAME_PRODUCER,
      {},
      { observe: { tracing: true, sampled: true } },
    ),
    variant(
      'ours-observed',
      { concurrency: 50 },
      'as ours, with both JobQueueMetricsModule and JobQueueTracingModule',
      SAME_PRODUCER,
      {},
      { observe: { metrics: true, tracing: true } },
    ),
    // What a handler in a transaction costs: a pooled connection, BEGIN, the completion and
    // COMMIT per run, where the plain path batches completions.
    variant(
      'ours-transaction',
      { concurrency: 50 },
      'as ours, the handler with transaction: true (pool of 51: concurrency + 1)',
      SAME_PRODUCER,
      {},
      { transaction: true },
    ),
    // What per-key concurrency limits cost: the limited claim, the key-slot trigger, and jobs
    // set aside and moved back while their key is at its limit.
    variant(
      'ours-per-key',
      { concurrency: 50 },
      'as ours, concurrencyPerKey 5 over 100 keys (up to 500 at once: the limit is not reached)',
      SAME_PRODUCER,
      {},
      { perKey: { keys: 100, limit: 5 } },
    ),
    variant(
      'ours-per-key-busy',
      { concurrency: 50 },
      'as ours, concurrencyPerKey 2 over 10 keys (20 at once: the limit holds the worker back)',
      SAME_PRODUCER,
      {},
      { perKey: { keys: 10, limit: 2 } },
    ),
    // What the listing's indexes cost every write: ours as it was before them. Enqueue, bulk
    // and one worker process (claims and outcomes write row versions, and index entries).
    variant(
      'ours-no-list-index',
      { concurrency: 50 },
      "as ours, without listJobs' indexes (jobs_list_idx, jobs_unique_key_prefix_idx)",
      ['process2', 'process4', 'latency', 'cancel', 'delayed', 'claim', 'rss', 'listing'],
      {},
      { dropIndexes: LISTING_INDEXES },
    ),
  ],

  async prepare(db, v) {
    // The variant's own build runs its own migrations (the baseline's, for `@base`).
    const { app } = await bootApp(db.url, { migrationsRun: true, queueDir: v?.queueDir });
    await app.close();
    if (v?.dropIndexes?.length) {
      const client = new Client({ connectionString: db.url });
      await client.connect();
      try {
        for (const name of v.dropIndexes) await client.query(`DROP INDEX ${qualified(name)}`);
      } finally {
        await client.end();
      }
    }
  },

  async openProducer(db, v) {
    const { app, queueService } = await bootApp(db.url, {
      name: 'bench_producer',
      queueDir: v?.queueDir,
    });
    let n = 0;
    const keyed = v?.perKey
      ? (job) => ({ ...job, concurrencyKey: `k${n++ % v.perKey.keys}` })
      : (job) => job;
    return {
      add: (data) => queueService.enqueue(JOB_TYPE, data),
      cancel: (id) => queueService.cancel(id),
      addBulk: (list) =>
        queueService.enqueueMany(list.map((data) => keyed({ type: JOB_TYPE, data }))),
      addDelayed: (list) =>
        queueService.enqueueMany(
          list.map(({ data, delayMs }) => ({ type: JOB_TYPE, data, delayMs })),
        ),
      close: () => app.close(),
    };
  },

  openCounter: (db) =>
    sqlCounter(db.url, `SELECT count(*) AS n FROM ${JOBS} WHERE status = 'completed'`),

  /**
   * The module starts its worker while the application boots, and has no "start later" switch.
   * So that a worker's measured time starts when it can claim, not when its process starts,
   * the bench holds an EXCLUSIVE lock on `jobs` while the workers boot (their first claim waits
   * on it) and releases it at the start signal. Plain reads (the counter) still go through.
   */
  async holdWorkers(db) {
    const client = new Client({ connectionString: db.url });
    await client.connect();
    await client.query('BEGIN');
    await client.query(`LOCK TABLE ${JOBS} IN EXCLUSIVE MODE`);
    return async () => {
      await client.query('COMMIT');
      await client.end();
    };
  },

  instrument,

  async openWorker(db, v, { onJob, hold }) {
    const { app } = await bootApp(db.url, {
      moduleOptions: v.moduleOptions,
      onJob,
      hold,
      logLine: v.logLine,
      perKey: v.perKey,
      observe: v.observe,
      transaction: v.transaction,
      queueDir: v.queueDir,
    });
    return {
      start: async () => undefined, // already started at boot (see holdWorkers)
      stop: () => app.close(),
    };
  },

  JOB_TYPE,
  load,
};

// With --baseline every variant has a twin on the baseline's build, the same in all else.
if (BASELINE) {
  module.exports.variants.push(
    ...module.exports.variants.map((v) => ({
      ...v,
      name: `${v.name}@base`,
      summary: `${v.summary}; the baseline's build (--baseline)`,
      baseOf: v.name,
      queueDir: BASELINE,
    })),
  );
}
