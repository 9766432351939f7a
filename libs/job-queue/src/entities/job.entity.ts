import { Column, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { DEFAULT_SCHEMA } from '../job-queue.constants';
import { JobStatus } from './job-status.enum';

/**
 * One row of the `jobs` table. The columns mirror the migrations exactly; the entity has no
 * behaviour, so it can be read with any TypeORM repository an application already has.
 *
 * `id` is a `bigint`, which the `pg` driver returns as a string to keep every value exact.
 *
 * Its table is the default schema's, `job_queue.jobs`: TypeORM fixes an entity's table when the
 * class is declared. A queue in another schema (`schema` option) returns `Job`s from
 * `QueueService` all the same; to read its table through a repository, declare an entity of its
 * own over it: `@Entity({ name: 'jobs', schema: 'billing_queue' }) class BillingJob extends Job {}`.
 *
 * @publicApi
 */
@Entity({ name: 'jobs', schema: DEFAULT_SCHEMA })
export class Job<TData = unknown, TResult = unknown> {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id: string;

  @Column({ name: 'job_type', type: 'text' })
  jobType: string;

  /** Higher runs first. Default 100. */
  @Column({ type: 'integer', default: 100 })
  priority: number;

  @Column({ type: 'text', default: JobStatus.Pending })
  status: JobStatus;

  @Column({ type: 'jsonb', default: () => "'{}'::jsonb" })
  data: TData;

  /** 0..100, written by `JobContext.progress` / `QueueService.updateProgress`. */
  @Column({ type: 'smallint', default: 0 })
  progress: number;

  @Column({ name: 'current_stage', type: 'text', nullable: true })
  currentStage: string | null;

  /** How many progress reports the job has made. */
  @Column({ name: 'events_count', type: 'integer', default: 0 })
  eventsCount: number;

  @Column({ name: 'worker_id', type: 'text', nullable: true })
  workerId: string | null;

  @Column({ name: 'claimed_at', type: 'timestamptz', nullable: true })
  claimedAt: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt: Date | null;

  /** Claims so far, including the current one. */
  @Column({ type: 'integer', default: 0 })
  attempts: number;

  /**
   * The job's attempt limit: given at enqueue, else its handler's `maxAttempts` (or the module's
   * `defaultMaxAttempts`), written by its first claim. `null` only until then.
   */
  @Column({ name: 'max_attempts', type: 'integer', nullable: true })
  maxAttempts: number | null;

  /**
   * The fencing token of the job's current (or last) run: every claim increments it, nothing
   * lowers it. A write of a run whose token is no longer the job's, or once the job is no longer
   * held, changes nothing.
   */
  @Column({ name: 'run_token', type: 'integer', default: 0 })
  runToken: number;

  /**
   * The job's backoff `baseDelayMs` (see `BackoffOptions`): its handler's, or the module's,
   * written by its first claim with `backoffMaxMs` and `backoffJitter`, so that every node retries
   * and rescues it alike. `null` only until then.
   */
  @Column({ name: 'backoff_base_ms', type: 'integer', nullable: true })
  backoffBaseMs: number | null;

  /** The job's backoff `maxDelayMs`; see `backoffBaseMs`. */
  @Column({ name: 'backoff_max_ms', type: 'integer', nullable: true })
  backoffMaxMs: number | null;

  /** The job's backoff `jitter`; see `backoffBaseMs`. */
  @Column({ name: 'backoff_jitter', type: 'double precision', nullable: true })
  backoffJitter: number | null;

  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError: string | null;

  /** Not before: the job is claimable once `runAt <= now()`. Delays and backoff move it. */
  @Column({ name: 'run_at', type: 'timestamptz', default: () => 'now()' })
  runAt: Date;

  /** The lease: refreshed by the worker that holds the job; the reaper recovers stale ones. */
  @Column({ name: 'heartbeat_at', type: 'timestamptz', nullable: true })
  heartbeatAt: Date | null;

  /** At most one unfinished job per key. */
  @Column({ name: 'unique_key', type: 'text', nullable: true })
  uniqueKey: string | null;

  /**
   * The key whose slots the job takes when its handler sets `concurrencyPerKey` (a tenant, an
   * account): at most that many of the type's jobs of one key run at once, across every node.
   */
  @Column({ name: 'concurrency_key', type: 'text', nullable: true })
  concurrencyKey: string | null;

  /** What the handler returned. */
  @Column({ type: 'jsonb', nullable: true })
  result: TResult | null;

  /**
   * Per-job context captured at enqueue (the module's `context` hooks, a trace context) and
   * restored around each run; `null` when nothing was captured. At most `maxMetaBytes`.
   */
  @Column({ type: 'jsonb', nullable: true })
  meta: Record<string, unknown> | null;

  /** The flow the job belongs to (`QueueService.flow`), or `null`. */
  @Column({ name: 'flow_id', type: 'uuid', nullable: true })
  flowId: string | null;

  /** The job's step name in its flow, or `null`. */
  @Column({ name: 'step_name', type: 'text', nullable: true })
  stepName: string | null;

  /** How many of its dependencies have not finished yet; it is `blocked` while any has not. */
  @Column({ name: 'unfinished_dependencies', type: 'integer', default: 0 })
  unfinishedDependencies: number;

  /**
   * What a dependency that fails or is cancelled does to this job: `fail` it too, or `continue`
   * (it runs once every dependency has finished). `null` for a job without dependencies.
   */
  @Column({ name: 'on_dependency_failure', type: 'text', nullable: true })
  onDependencyFailure: 'fail' | 'continue' | null;

  /** Whether some job depends on this one (retention keeps it while such a job is unfinished). */
  @Column({ name: 'has_dependants', type: 'boolean', default: false })
  hasDependants: boolean;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt: Date;
}
