/**
 * The randomized model test's driver: one run of one seed. It makes a database of its own on the
 * given server (migrated, plus the side tables of `fuzz-schema.ts`), boots the worker processes
 * (`fleet.ts`) and a producer app (`JobQueueModule` with `worker: false`, as a user's API would
 * have it), then draws one operation a step from the seed (`operations.ts`), runs it
 * (`execute.ts`) and checks the step invariants (`invariants.ts`). Every `quiesceEvery` steps,
 * and at the end, it lets the queue settle (every worker up, nothing paused) and checks the
 * quiescence invariants.
 *
 * fast-check gives the operations and their options; it cannot drive several processes or
 * shrink a run whose interleavings are the processes' own, so the driver is ours: a seed
 * replays the same operations in the same order (not the same interleavings), and a failure
 * prints the whole operation log.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { JobQueueModule, QueueService } from 'nest-pg-job-queue';
import { createMigratedTemplate, withAdminClient, withDatabase } from '../support/database';
import { execute, ExecutionContext } from './execute';
import { Fleet } from './fleet';
import { FUZZ_SCHEMA } from './fuzz-schema';
import type { OperationKind } from './fuzz-types';
import { quiescenceChecks, settle, stepChecks } from './invariants';
import { FuzzModel, Violation } from './model';
import {
  DEFAULT_WEIGHTS,
  drawOperation,
  INITIAL_HANDLERS,
  operationArbitrary,
  SCHEDULES,
} from './operations';

export interface FuzzRunOptions {
  serverUrl: string;
  seed: number;
  /** Stop after this many operations, or at `untilMs` (Date.now()), whichever comes first. */
  steps?: number;
  untilMs?: number;
  processes?: number;
  quiesceEvery?: number;
  weights?: Partial<Record<OperationKind, number>>;
  /** Stop at the first violation that is not a known defect (the long mode's default). */
  stopAtFirst?: boolean;
  /** Stop once each of these (known defect names or invariant names) has been found. */
  stopWhenFound?: string[];
  log?: (line: string) => void;
  /** Leave the run's database behind (its name is logged), to read after a failure. */
  keepDatabase?: boolean;
}

export interface FuzzRunReport {
  seed: number;
  steps: number;
  seconds: number;
  operations: Record<string, number>;
  checks: Record<string, number>;
  violations: Violation[];
  /** Seconds from the run's start to the first violation of each invariant or known defect. */
  firstFound: Record<string, number>;
  operationLog: FuzzModel['operationLog'];
}

const SETTLE_DEADLINE_MS = 60_000;

export async function runFuzz(options: FuzzRunOptions): Promise<FuzzRunReport> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const name = `jq_fuzz_${randomBytes(5).toString('hex')}`;
  await createMigratedTemplate(options.serverUrl, name);
  const databaseUrl = withDatabase(options.serverUrl, name);
  const model = new FuzzModel();
  const weights = { ...DEFAULT_WEIGHTS, ...options.weights };
  const arbitrary = operationArbitrary(weights);
  const fleet = new Fleet(databaseUrl, options.processes ?? 3, INITIAL_HANDLERS, 3_000);

  @Module({
    imports: [
      TypeOrmModule.forRoot({
        type: 'postgres',
        url: databaseUrl,
        extra: { max: 8, application_name: 'fuzz-driver' },
      }),
      JobQueueModule.forRoot({ worker: false, events: { logCompletedRuns: true } }),
    ],
  })
  class FuzzDriverModule {}

  let app: Awaited<ReturnType<typeof NestFactory.createApplicationContext>> | undefined;
  const firstFound: Record<string, number> = {};
  let logged = 0;
  const noteFinds = () => {
    for (const v of model.violations.slice(logged)) {
      const what = v.knownDefect ? `known (${v.knownDefect})` : 'VIOLATION';
      log(`seed ${options.seed}: ${what} at step ${v.step} [${v.invariant}]: ${v.message}`);
    }
    logged = model.violations.length;
    for (const v of model.violations) {
      const key = v.knownDefect ?? v.invariant;
      firstFound[key] ??= Math.round((Date.now() - started) / 100) / 10;
    }
  };
  try {
    const setup = new DataSource({ type: 'postgres', url: databaseUrl });
    await setup.initialize();
    await setup.query(FUZZ_SCHEMA);
    await setup.destroy();
    app = await NestFactory.createApplicationContext(FuzzDriverModule, { logger: ['error'] });
    const context: ExecutionContext = {
      queue: app.get(QueueService),
      dataSource: app.get(DataSource),
      fleet,
      model,
      databaseUrl,
    };
    for (const [i, schedule] of SCHEDULES.entries()) {
      const type = schedule.replace('fz.sched.', 'fz.');
      await context.queue.schedule(schedule, '0 0 1 1 *', type, { n: -1 - i, b: 'ok', ms: 10 });
    }
    await fleet.start();
    log(`seed ${options.seed}: ${fleet.size} worker processes ready in ${Date.now() - started} ms`);

    const quiesceEvery = options.quiesceEvery ?? 60;
    const done = (step: number) =>
      (options.steps !== undefined && step >= options.steps) ||
      (options.untilMs !== undefined && Date.now() >= options.untilMs) ||
      (options.stopAtFirst === true && model.violations.some((v) => !v.knownDefect)) ||
      (options.stopWhenFound !== undefined &&
        options.stopWhenFound.every((what) => what in firstFound));
    let step = 0;
    while (!done(step)) {
      model.step = ++step;
      const operation = drawOperation(arbitrary, options.seed, step);
      model.counts.operations.set(
        operation.op,
        (model.counts.operations.get(operation.op) ?? 0) + 1,
      );
      const result = await execute(context, operation);
      model.operationLog.push({ step, operation, result });
      fleet.checkAlive();
      await stepChecks(context);
      if (step % quiesceEvery === 0) {
        await quiesce(context);
        noteFinds();
        const found = Object.keys(firstFound).join(', ') || 'nothing';
        log(
          `seed ${options.seed}: step ${step}, ${Math.round((Date.now() - started) / 1000)} s, found: ${found}`,
        );
      }
      noteFinds();
    }
    await quiesce(context);
    noteFinds();
    return {
      seed: options.seed,
      steps: step,
      seconds: (Date.now() - started) / 1000,
      operations: Object.fromEntries(model.counts.operations),
      checks: Object.fromEntries(model.counts.checks),
      violations: model.violations,
      firstFound,
      operationLog: model.operationLog,
    };
  } finally {
    await fleet.stop();
    await app?.close();
    if (options.keepDatabase) log(`seed ${options.seed}: database kept: ${databaseUrl}`);
    else
      await withAdminClient(options.serverUrl, (client) =>
        client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
      );
  }
}

/** Every paused type resumed, every worker up; then settle and check. */
async function quiesce(context: ExecutionContext): Promise<void> {
  await Promise.all(context.model.paused.values());
  context.fleet.checkAlive();
  await settle(context, SETTLE_DEADLINE_MS);
  await quiescenceChecks(context);
  await stepChecks(context);
}
