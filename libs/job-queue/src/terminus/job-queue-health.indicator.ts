import { Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { databaseErrorText } from '../errors/database-error.util';
import type { ResolvedJobQueueOptions } from '../options/resolved-options';
import { JobPoller } from '../worker/job-poller';
import { JobWorker } from '../worker/job-worker';
import { failedSince, longestDueWaitMs, staleJobsExist } from './health.queries';
import {
  JobQueueHealthOptions,
  ResolvedHealthOptions,
  resolveHealthOptions,
} from './job-queue-health.options';

/** The least time a healthy worker may go without finishing a poll (see `workerStallMs`). */
const MIN_WORKER_STALL_MS = 30_000;

/** `work`, or a rejection once `ms` have passed: a pool whose server is gone can hang. */
function withinMs<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * A health indicator for `@nestjs/terminus`: the queue's database answers, this process's worker
 * is polling, and, when asked, no threshold is crossed (jobs due too long, too many failures,
 * stale leases). Provide it beside `TerminusModule` and call `isHealthy()` from a
 * `HealthCheckService.check([...])`. Details name what was checked, never job data.
 *
 * @publicApi
 */
@Injectable()
export class JobQueueHealthIndicator {
  /** @internal Nest's injector makes it. */
  constructor(
    private readonly moduleRef: ModuleRef,
    private readonly health: HealthIndicatorService,
  ) {}

  /** Up, or down with the first problem as `message` and what each check found. */
  async isHealthy<const Key extends string = 'jobQueue'>(
    key: Key = 'jobQueue' as Key,
    options: JobQueueHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const checks = resolveHealthOptions(options);
    const session = this.health.check(key);
    const details: Record<string, unknown> = {};
    const problem = await this.firstProblem(checks, details);
    return problem === undefined
      ? session.up(details)
      : session.down({ ...details, message: problem });
  }

  /** Runs the checks in order, filling `details`; returns the first problem found. */
  private async firstProblem(
    checks: ResolvedHealthOptions,
    details: Record<string, unknown>,
  ): Promise<string | undefined> {
    // The queue's module may or may not be global: its providers are found wherever they are.
    const get = <T>(token: unknown): T => this.moduleRef.get<T>(token as never, { strict: false });
    const options = get<ResolvedJobQueueOptions>(RESOLVED_JOB_QUEUE_OPTIONS);
    const db = get<DataSource>(JOB_QUEUE_DATA_SOURCE);
    const within = <T>(what: string, work: Promise<T>): Promise<T> =>
      withinMs(checks.timeoutMs, what, work);

    try {
      await within('the database', db.query('SELECT 1'));
      details.database = 'up';
    } catch (error) {
      details.database = 'down';
      return `Database: ${databaseErrorText(error)}`;
    }

    const workerProblem = this.workerProblem(options, checks, get, details);
    if (workerProblem) return workerProblem;

    try {
      if (checks.maxDueWaitMs !== undefined) {
        const waitMs = await within('the due-wait check', longestDueWaitMs(db, options.schema));
        details.longestDueWaitMs = waitMs === null ? 0 : Math.round(waitMs);
        if (waitMs !== null && waitMs > checks.maxDueWaitMs) {
          return `A job has been due for ${Math.round(waitMs)} ms, more than maxDueWaitMs (${checks.maxDueWaitMs})`;
        }
      }
      if (checks.maxFailed) {
        const { count, periodMs } = checks.maxFailed;
        const since = new Date(Date.now() - periodMs);
        const failed = await within(
          'the failure check',
          failedSince(db, options.schema, since, count + 1),
        );
        details.failedRecently = failed;
        if (failed > count) {
          return `More than ${count} job(s) failed in the last ${periodMs} ms (maxFailed)`;
        }
      }
      if (checks.failOnStaleJobs) {
        const stale = await within(
          'the stale-job check',
          staleJobsExist(db, options.schema, options.staleAfterMs),
        );
        details.staleJobs = stale;
        if (stale) return `Jobs are held past their lease (staleAfterMs ${options.staleAfterMs})`;
      }
    } catch (error) {
      return `Database: ${databaseErrorText(error)}`;
    }
    return undefined;
  }

  /** The worker's problem, if any: `worker: false` has no worker to check. */
  private workerProblem(
    options: ResolvedJobQueueOptions,
    checks: ResolvedHealthOptions,
    get: <T>(token: unknown) => T,
    details: Record<string, unknown>,
  ): string | undefined {
    if (options.worker === false) {
      details.worker = 'disabled';
      return undefined;
    }
    // Not running: not started yet (`autoStart: false`), or stopped: this process does not
    // take jobs, so it is not ready for the work it was configured to do.
    if (!get<JobWorker>(JobWorker).isRunning) {
      details.worker = 'stopped';
      return 'The worker is not running';
    }
    const stallMs =
      checks.workerStallMs ?? Math.max(MIN_WORKER_STALL_MS, 3 * options.worker.pollIntervalMs);
    // Set from the poller's start (a first claim that hangs counts); unset only when the worker
    // claims nothing (no handlers), so has no loop to stall.
    const lastPollAt = get<JobPoller>(JobPoller).lastPollAt;
    const sinceMs = lastPollAt === undefined ? undefined : Date.now() - lastPollAt;
    details.worker = 'running';
    details.lastPollMsAgo = sinceMs ?? null;
    if (sinceMs !== undefined && sinceMs > stallMs) {
      details.worker = 'stalled';
      return `The worker has not polled for ${sinceMs} ms (workerStallMs ${stallMs})`;
    }
    return undefined;
  }
}
