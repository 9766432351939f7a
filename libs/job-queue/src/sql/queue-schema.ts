import { createHash } from 'node:crypto';
import { SCHEMA_NAME_PATTERN } from '../job-queue.constants';

/**
 * The payload of a notification on the insert channel that says the jobs were in the queue
 * already (staged once due, or of a type resumed): their place in each type's queue is behind
 * where the workers' claims resume, so a worker's next claim reads from the heads (see
 * `ClaimCursors`). The insert trigger's notifications carry none: new jobs come after.
 */
export const PENDING_AGAIN_PAYLOAD = 'pending-again';

/** Makes one statement's text for a schema; see `QueueSchema.statement`. */
export type StatementBuilder = (schema: QueueSchema) => string;

/**
 * The names of one queue schema's objects as SQL writes them, and the statements that use them,
 * each built once per schema.
 *
 * Name resolution: every object of the queue is named with its schema (`"job_queue".jobs`), every
 * built-in function the statements call is named `pg_catalog.` (`pg_catalog.now()`), and every
 * operator's operands have types of which `pg_catalog` holds an exact operator (the text columns
 * are `text`, parameters are cast): with `pg_catalog` searched first, as it is unless a
 * `search_path` names it later, nothing a role creates in `public` (or any other schema on the
 * path) is a candidate, or a better one. The functions of the migrations go further: they run
 * with `search_path = pg_catalog, pg_temp`.
 */
export class QueueSchema {
  /** `"job_queue"`. */
  readonly quoted: string;
  /** The jobs table: `"job_queue".jobs`. */
  readonly jobs: string;
  /** Per-type settings shared by every node (paused, retention): `"job_queue".job_types`. */
  readonly jobTypes: string;
  /** Recurring jobs, one row per schedule: `"job_queue".job_schedules`. */
  readonly jobSchedules: string;
  /** The one-row record of the workers' cron ticks: `"job_queue".job_schedule_ticks`. */
  readonly jobScheduleTicks: string;
  /** The one-row snapshot of `stats()` counts: `"job_queue".job_stats`. */
  readonly jobStats: string;
  /** Each job's event log, written with its transitions: `"job_queue".job_events`. */
  readonly jobEvents: string;
  /** The starts each rate-limited type (or key) made, per claim: `"job_queue".job_rate_starts`. */
  readonly jobRateStarts: string;
  /** Keys at their rate limit whose jobs a claim set aside, and when they may start again. */
  readonly jobRateBlocked: string;
  /** The claim function: `"job_queue".claim_job_batch`. */
  readonly claimJobBatch: string;
  /** The insert trigger's function: `"job_queue".jobs_notify_inserted`. */
  readonly notifyInserted: string;
  /** The function of the trigger that frees a concurrency key's slot: `"job_queue".jobs_release_key_slot`. */
  readonly releaseKeySlot: string;
  /** Whether a row's unique key counts in its status (`jobs_unique_key_idx`'s predicate). */
  readonly uniqueStateCounts: string;
  /** The function of the trigger that copies a job failed for good to its type's dead letters: `"job_queue".jobs_dead_letter`. */
  readonly deadLetter: string;
  /** Which job waits for which (`dependsOn`, flows): `"job_queue".job_dependencies`. */
  readonly jobDependencies: string;
  /** The function of the trigger that moves a finished job's dependants on: `"job_queue".jobs_resolve_dependants`. */
  readonly resolveDependants: string;
  /** The function of the trigger that keeps a dependency its dependants still need: `"job_queue".jobs_keep_dependencies`. */
  readonly keepDependencies: string;
  /** The function of the trigger that makes blocked dependants wait for a retried dependency again: `"job_queue".jobs_reopen_dependants`. */
  readonly reopenDependants: string;
  /**
   * The first key of the advisory locks that make claims of a limited type take turns (the
   * second is the type's hashtext), an int4 as decimal text; see `claimLockClass`.
   */
  readonly claimLockClass: string;
  /** What the insert trigger notifies: `<schema>_jobs_inserted`. */
  readonly insertedChannel: string;
  /** What `cancel()` notifies, with `<job id>:<run token>`: `<schema>_job_cancelled`. */
  readonly cancelledChannel: string;
  /** What `pause()` notifies, with the job type: `<schema>_job_type_paused`. */
  readonly pausedChannel: string;
  /** What the statements of job transitions notify, with their events: `<schema>_job_events`. */
  readonly eventsChannel: string;
  /** The reaper's advisory lock key, a bigint as decimal text; see `reaperLockKey`. */
  readonly reaperLockKey: string;
  private readonly statements = new Map<StatementBuilder, string>();

  constructor(readonly name: string) {
    // Checked again here (the options check it first, naming the option): the name goes into SQL
    // text, quoted, and must be an identifier with nothing to escape.
    if (!SCHEMA_NAME_PATTERN.test(name)) throw new Error(`Not a queue schema name: ${name}`);
    this.quoted = `"${name}"`;
    this.jobs = `${this.quoted}.jobs`;
    this.jobTypes = `${this.quoted}.job_types`;
    this.jobSchedules = `${this.quoted}.job_schedules`;
    this.jobScheduleTicks = `${this.quoted}.job_schedule_ticks`;
    this.jobStats = `${this.quoted}.job_stats`;
    this.jobEvents = `${this.quoted}.job_events`;
    this.jobRateStarts = `${this.quoted}.job_rate_starts`;
    this.jobRateBlocked = `${this.quoted}.job_rate_blocked`;
    this.claimJobBatch = `${this.quoted}.claim_job_batch`;
    this.notifyInserted = `${this.quoted}.jobs_notify_inserted`;
    this.releaseKeySlot = `${this.quoted}.jobs_release_key_slot`;
    this.uniqueStateCounts = `${this.quoted}.job_unique_state_counts`;
    this.deadLetter = `${this.quoted}.jobs_dead_letter`;
    this.jobDependencies = `${this.quoted}.job_dependencies`;
    this.resolveDependants = `${this.quoted}.jobs_resolve_dependants`;
    this.keepDependencies = `${this.quoted}.jobs_keep_dependencies`;
    this.reopenDependants = `${this.quoted}.jobs_reopen_dependants`;
    this.claimLockClass = claimLockClass(name);
    this.insertedChannel = `${name}_jobs_inserted`;
    this.cancelledChannel = `${name}_job_cancelled`;
    this.pausedChannel = `${name}_job_type_paused`;
    this.eventsChannel = `${name}_job_events`;
    this.reaperLockKey = reaperLockKey(name);
  }

  /**
   * The advisory lock key of one maintenance task of this schema (`'prune'`, `'cron'`, ...), so
   * that one node at a time runs it; see `maintenanceLockKey`.
   */
  lockKey(task: string): string {
    return maintenanceLockKey(this.name, task);
  }

  /** `build(this)`, made at the first call and kept: hot paths look their text up. */
  statement(build: StatementBuilder): string {
    let text = this.statements.get(build);
    if (text === undefined) {
      text = build(this);
      this.statements.set(build, text);
    }
    return text;
  }
}

const schemas = new Map<string, QueueSchema>();

/** The `QueueSchema` of a (validated) schema name, one per name. */
export function queueSchema(name: string): QueueSchema {
  let schema = schemas.get(name);
  if (!schema) {
    schema = new QueueSchema(name);
    schemas.set(name, schema);
  }
  return schema;
}

/**
 * The key of the advisory lock that lets one reaper of a schema act at a time: the first 8 bytes
 * of SHA-256 of `nest-pg-job-queue:<schema>`, as a signed 64-bit integer. Advisory locks are per
 * database, so queues in two schemas of one database reap independently, and the key is no
 * constant another application could happen to use. The same value in SQL:
 * `('x' || left(encode(sha256(convert_to('nest-pg-job-queue:' || schema, 'UTF8')), 'hex'), 16))::bit(64)::bigint`.
 */
export function reaperLockKey(schema: string): string {
  const digest = createHash('sha256').update(`nest-pg-job-queue:${schema}`, 'utf8').digest();
  return digest.readBigInt64BE(0).toString();
}

/**
 * The advisory lock key of a maintenance task other than the reaper: the first 8 bytes of
 * SHA-256 of `nest-pg-job-queue:<schema>:<task>`, as a signed 64-bit integer (decimal text).
 * Distinct per schema and per task, so two tasks never wait for each other.
 */
export function maintenanceLockKey(schema: string, task: string): string {
  return reaperLockKey(`${schema}:${task}`);
}

/**
 * The first key of a schema's claim locks (`pg_advisory_xact_lock(int4, int4)`): the first 4
 * bytes of SHA-256 of `nest-pg-job-queue:<schema>:claim`, as a signed 32-bit integer. Locks of
 * two int4 keys are a space of their own, apart from the bigint keys of the maintenance tasks.
 */
export function claimLockClass(schema: string): string {
  const digest = createHash('sha256').update(`nest-pg-job-queue:${schema}:claim`, 'utf8').digest();
  return digest.readInt32BE(0).toString();
}
