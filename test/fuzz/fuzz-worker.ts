/**
 * One worker process of the randomized model test (`npm run fuzz`, test/fuzz/README in the
 * repository README). Spawned by `fleet.ts` as
 *   node -r ts-node/register/transpile-only -r tsconfig-paths/register test/fuzz/fuzz-worker.ts
 * and configured by one JSON document in `FUZZ_WORKER` (`FuzzWorkerConfig`): its id, its pool's
 * `application_name` (so faults can find its connections), and each type's `@JobHandler` options,
 * which a "deploy" changes by restarting the process with others.
 *
 * Every handler does what the job's data says (`HandlerScript`): complete, fail some attempts,
 * fail every attempt, snooze once, or hang until its signal aborts (its `timeoutMs`); it may
 * report progress and log first. Each handler start is one row in `fuzz_runs` (the run's token,
 * attempt and worker), written before anything else, so the driver can count starts.
 *
 * Standard input takes one command a line: `stop` and `start` call `JobWorker.stop()` /
 * `start()`; it prints `ready <id>` once booted, `stopped <id>` / `started <id>` after each
 * command. SIGTERM closes the app (the worker hands back what it holds); the process exits when
 * its stdin closes, so it never outlives the driver.
 */
import 'reflect-metadata';
import { createInterface } from 'node:readline';
import { Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { InjectDataSource, TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  Job,
  JobContext,
  JobHandler,
  JobHandlerOptions,
  JobQueueModule,
  JobWorker,
} from 'nest-pg-job-queue';
import type { FuzzWorkerConfig, HandlerScript } from './fuzz-types';

const config = JSON.parse(process.env.FUZZ_WORKER ?? 'null') as FuzzWorkerConfig | null;
if (!config) throw new Error('fuzz-worker: FUZZ_WORKER is required');

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(signal.reason);
    }
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

@Injectable()
class ScriptedHandlers {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /**
   * One `fuzz_runs` row for this start, and how many earlier starts the job had. Retried a few
   * times: a fault may have just terminated the pool's connections, and a start the driver cannot
   * count would read as an attempt spent without one.
   */
  private async recordStart(job: Job): Promise<Array<{ earlier: number }>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.dataSource.query(
          `WITH earlier AS (SELECT count(*)::int AS earlier FROM fuzz_runs WHERE job_id = $1),
                ins AS (INSERT INTO fuzz_runs (job_id, run_token, attempt, worker_id, job_type)
                        VALUES ($1, $2, $3, $4, $5))
           SELECT earlier FROM earlier`,
          [job.id, job.runToken, job.attempts, config!.workerId, job.jobType],
        );
      } catch (error) {
        if (attempt >= 5) throw error;
        await new Promise((done) => setTimeout(done, 100));
      }
    }
  }

  /** What every handler runs: the job's script, after recording the start. */
  async run(job: Job<HandlerScript>, ctx: JobContext): Promise<unknown> {
    const script = job.data;
    const [{ earlier }] = await this.recordStart(job);
    if (script.progress) await ctx.progress(50, 'half');
    if (script.log) ctx.log('scripted line', { n: script.n });
    switch (script.b) {
      case 'snooze':
        if (earlier === 0) return ctx.snooze(script.ms);
        break;
      case 'fail':
        if (job.attempts <= 1) throw new Error(`scripted failure of attempt ${job.attempts}`);
        break;
      case 'exhaust':
        await sleep(script.ms, ctx.signal);
        throw new Error('scripted failure of every attempt');
      case 'hang':
        await new Promise<never>((_, reject) => {
          if (ctx.signal.aborted) reject(ctx.signal.reason);
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true });
        });
        break;
      case 'ok':
        break;
    }
    await sleep(script.ms, ctx.signal);
    if (ctx.signal.aborted) throw ctx.signal.reason;
    return { n: script.n, by: config!.workerId };
  }
}

/** One provider per type, its method decorated with the options this process was given. */
function handlerProvider(jobType: string, options: JobHandlerOptions) {
  @Injectable()
  class TypeHandler {
    constructor(private readonly scripted: ScriptedHandlers) {}
    handle(job: Job<HandlerScript>, ctx: JobContext): Promise<unknown> {
      return this.scripted.run(job, ctx);
    }
  }
  const descriptor = Object.getOwnPropertyDescriptor(TypeHandler.prototype, 'handle')!;
  JobHandler(jobType, options)(TypeHandler.prototype, 'handle', descriptor);
  Object.defineProperty(TypeHandler, 'name', { value: `Handler_${jobType.replace(/\W/g, '_')}` });
  return TypeHandler;
}

@Module({
  imports: [
    TypeOrmModule.forRoot({
      type: 'postgres',
      url: config.databaseUrl,
      retryAttempts: 0,
      extra: { max: config.concurrency + 4, application_name: config.applicationName },
    }),
    JobQueueModule.forRoot({
      workerId: config.workerId,
      worker: { concurrency: config.concurrency, pollIntervalMs: 200 },
      staleAfterMs: config.staleAfterMs,
      heartbeatIntervalMs: 300,
      reaperIntervalMs: 500,
      shutdownTimeoutMs: 1_000,
      events: { logCompletedRuns: true },
    }),
  ],
  providers: [
    ScriptedHandlers,
    ...Object.entries(config.handlers).map(([type, options]) => handlerProvider(type, options)),
  ],
})
class FuzzWorkerModule {}

process.stdin.on('end', () => process.exit(3));

async function main(): Promise<void> {
  const app = await NestFactory.createApplicationContext(FuzzWorkerModule, {
    logger: ['error', 'warn'],
    abortOnError: false,
  });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
  const worker = app.get(JobWorker);
  const lines = createInterface({ input: process.stdin });
  let queue = Promise.resolve();
  lines.on('line', (line) => {
    const command = line.trim();
    queue = queue.then(async () => {
      if (command === 'stop') await worker.stop();
      else if (command === 'start') await worker.start();
      else return;
      process.stdout.write(`${command === 'stop' ? 'stopped' : 'started'} ${config!.workerId}\n`);
    });
  });
  process.stdout.write(`ready ${config!.workerId}\n`);
}

main().catch((error: unknown) => {
  new Logger('fuzz-worker').error((error as Error)?.stack ?? String(error));
  process.exit(1);
});
