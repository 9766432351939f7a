/**
 * The vocabulary of the randomized model test: what a job's handler does, how a worker process
 * is configured, and the operations the driver runs. Plain data, so that an operation log is
 * JSON and a failure can print it whole.
 */
import type { JobHandlerOptions } from 'nest-pg-job-queue';

/** What a handler does with a job: the job's `data`. */
export interface HandlerScript {
  /** A number of the driver's, to find the job in the operation log. */
  n: number;
  /** ok: complete; fail: fail the first attempt; exhaust: fail every attempt; snooze: snooze the
   *  first start; hang: wait until the signal aborts (the type's `timeoutMs`). */
  b: 'ok' | 'fail' | 'exhaust' | 'snooze' | 'hang';
  /** Work (or snooze) time, ms. */
  ms: number;
  progress?: boolean;
  log?: boolean;
  /** The step that enqueued it (set when the operation runs), to find what a call wrote. */
  s?: number;
}

export interface FuzzWorkerConfig {
  databaseUrl: string;
  workerId: string;
  applicationName: string;
  concurrency: number;
  staleAfterMs: number;
  handlers: Record<string, JobHandlerOptions>;
}

/** The limits a deploy can give a type (the `@JobHandler` options that live in `job_types`). */
export type LimitOptions = Pick<
  JobHandlerOptions,
  'concurrencyPerKey' | 'globalConcurrency' | 'ordered' | 'rateLimit'
>;

/** A job reference resolved when the operation runs: the `pick`-th of the jobs the driver knows,
 *  preferring those in `prefer` statuses (any job when none is). */
export interface JobRef {
  pick: number;
  prefer?: string[];
}

export interface JobSpec {
  type: string;
  script: HandlerScript;
  priority?: number;
  delayMs?: number;
  maxAttempts?: number;
  concurrencyKey?: string;
  unique?: {
    key: string;
    states?: Array<
      | 'scheduled'
      | 'pending'
      | 'waiting'
      | 'claimed'
      | 'running'
      | 'completed'
      | 'failed'
      | 'cancelled'
    >;
    forMs?: number;
    debounceMs?: number;
    throttleMs?: number;
  };
  dependsOn?: JobRef[];
  onDependencyFailure?: 'fail' | 'continue';
}

export type Operation =
  | { op: 'enqueue'; job: JobSpec; withOutcome: boolean }
  | { op: 'enqueueMany'; jobs: JobSpec[]; withOutcome: boolean }
  | { op: 'flow'; steps: Array<{ job: JobSpec; after: number[] }> }
  | { op: 'cancel'; job: JobRef; via: 'api' | 'cli' }
  | { op: 'retry'; job: JobRef; via: 'api' | 'cli' }
  | { op: 'redrive'; by: Array<{ type?: string; ids?: JobRef[] }> }
  | {
      op: 'prune';
      olderThanMs: number;
      statuses?: Array<'completed' | 'failed' | 'cancelled'>;
      via: 'api' | 'cli';
    }
  | { op: 'pause'; type: string; resumeAfterMs: number }
  | { op: 'runSchedule'; name: string }
  | { op: 'cancelFlow'; flow: number }
  /** `everywhere`: every worker in turn, a rolling deploy that completes; else one worker. */
  | { op: 'deploy'; type: string; limits: LimitOptions; worker: number; everywhere: boolean }
  | { op: 'kill'; worker: number }
  | { op: 'terminateConnections'; worker: number }
  | { op: 'stopStart'; worker: number; stoppedMs: number }
  | { op: 'sleep'; ms: number }
  /** A debounced job, then, once it has started (or after 3 s), an edit of its key. */
  | { op: 'debounceEdit'; job: JobSpec; edit: HandlerScript };

export type OperationKind = Operation['op'];
