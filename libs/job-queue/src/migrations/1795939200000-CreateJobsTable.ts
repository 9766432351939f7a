import { QueryRunner } from 'typeorm';
import { createJobsNotifyInsertedV1 } from '../sql/functions/jobs-notify-inserted.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

/** Marks a schema this migration created, so that its `down()` drops that one and no other. */
const CREATED_SCHEMA_COMMENT = 'nest-pg-job-queue: created by its CreateJobsTable migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  const [{ present }] = (await queryRunner.query(
    `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1::text) AS present`,
    [schema.name],
  )) as Array<{ present: boolean }>;
  if (!present) {
    await queryRunner.query(`CREATE SCHEMA IF NOT EXISTS ${schema.quoted}`);
    await queryRunner.query(`COMMENT ON SCHEMA ${schema.quoted} IS '${CREATED_SCHEMA_COMMENT}'`);
  }
  await queryRunner.query(`
    CREATE TABLE ${schema.jobs} (
      id             bigserial PRIMARY KEY,
      job_type       text NOT NULL,
      priority       integer NOT NULL DEFAULT 100,
      status         text NOT NULL DEFAULT 'pending',
      data           jsonb NOT NULL DEFAULT '{}'::jsonb,
      progress       smallint NOT NULL DEFAULT 0,
      current_stage  text,
      events_count   integer NOT NULL DEFAULT 0,
      worker_id      text,
      claimed_at     timestamptz,
      created_at     timestamptz NOT NULL DEFAULT now(),
      started_at     timestamptz,
      completed_at   timestamptz,
      attempts       integer NOT NULL DEFAULT 0,
      max_attempts   integer,
      run_token      integer NOT NULL DEFAULT 0,
      backoff_base_ms integer,
      backoff_max_ms integer,
      backoff_jitter double precision,
      last_error     text,
      run_at         timestamptz NOT NULL DEFAULT now(),
      heartbeat_at   timestamptz,
      unique_key     text,
      result         jsonb,
      updated_at     timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT jobs_status_check
        CHECK (status IN ('scheduled', 'pending', 'claimed', 'running', 'completed', 'failed',
                          'cancelled')),
      CONSTRAINT jobs_progress_check CHECK (progress BETWEEN 0 AND 100),
      CONSTRAINT jobs_attempts_check CHECK (attempts >= 0 AND (max_attempts IS NULL OR max_attempts >= 1)),
      CONSTRAINT jobs_job_type_length_check CHECK (char_length(job_type) <= 255),
      CONSTRAINT jobs_current_stage_length_check CHECK (char_length(current_stage) <= 255),
      CONSTRAINT jobs_worker_id_length_check CHECK (char_length(worker_id) <= 255),
      CONSTRAINT jobs_unique_key_length_check CHECK (char_length(unique_key) <= 255)
    )
  `);
  // At most one unfinished job per key (a scheduled one holds its key too); finished jobs keep
  // their key for the record.
  await queryRunner.query(`
    CREATE UNIQUE INDEX jobs_unique_key_idx ON ${schema.jobs} (unique_key)
      WHERE unique_key IS NOT NULL AND status IN ('scheduled', 'pending', 'claimed', 'running')
  `);
  // The stager's queue: scheduled jobs by due time, so each pass reads only the due ones. Jobs
  // not yet due live here, not in the claim's index, which then holds only claimable rows.
  await queryRunner.query(`
    CREATE INDEX jobs_scheduled_idx ON ${schema.jobs} (run_at) WHERE status = 'scheduled'
  `);
  // The reaper and findStale() look only at held jobs, ordered by lease age.
  await queryRunner.query(`
    CREATE INDEX jobs_lease_idx ON ${schema.jobs} (heartbeat_at)
      WHERE status IN ('claimed', 'running')
  `);
  await queryRunner.query(createJobsNotifyInsertedV1(schema));
  await queryRunner.query(`REVOKE ALL ON FUNCTION ${schema.notifyInserted}() FROM PUBLIC`);
  await queryRunner.query(`
    CREATE TRIGGER jobs_notify_inserted AFTER INSERT ON ${schema.jobs}
      FOR EACH STATEMENT EXECUTE FUNCTION ${schema.notifyInserted}()
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TRIGGER jobs_notify_inserted ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.notifyInserted}()`);
  await queryRunner.query(`DROP TABLE ${schema.jobs}`);
  // The schema goes only if `up` made it and nothing else lives in it now.
  const [{ ours }] = (await queryRunner.query(
    `SELECT EXISTS (
       SELECT 1 FROM pg_namespace n
       WHERE n.nspname = $1::text AND obj_description(n.oid, 'pg_namespace') = $2::text
         AND NOT EXISTS (SELECT 1 FROM pg_depend d
                         WHERE d.refclassid = 'pg_namespace'::regclass AND d.refobjid = n.oid)
     ) AS ours`,
    [schema.name, CREATED_SCHEMA_COMMENT],
  )) as Array<{ ours: boolean }>;
  if (ours) await queryRunner.query(`DROP SCHEMA ${schema.quoted}`);
}

/**
 * Lifecycle: `scheduled → pending → claimed → running → completed` (or `failed`); a job enters
 * at `scheduled` when its `run_at` is later than the insert's now() (delay, backoff of a retry or
 * a rescue) and at `pending` otherwise; the stager moves due `scheduled` jobs to `pending`.
 * `cancelled` from any unfinished state.
 *
 * The queue's schema (unless it exists already), and in it the `jobs` table with the seed's
 * columns (names kept) plus `run_at`, `heartbeat_at`, `unique_key`, `result`, `updated_at`,
 * `run_token` and the backoff columns, the indexes that are not about claiming, and the insert
 * trigger that wakes idle workers.
 *
 * `run_token` is the fencing token of the job's current run: every claim increments it and
 * nothing ever lowers it (a retry resets `attempts`, never the token). Every write that belongs to
 * a run (progress, heartbeat, outcome) names its token and the job must still be held
 * (`claimed`/`running`), so a run that was cancelled, retried or rescued since writes nothing.
 *
 * The policy of a job is on its row: `max_attempts` and `backoff_base_ms`/`backoff_max_ms`/
 * `backoff_jitter` are NULL until given at enqueue or filled in by the job's first claim from its
 * handler's options (the claiming node has the handler). Whichever node then fails or rescues an
 * attempt applies these values, not its own registry.
 *
 * The text columns are `text` with a CHECK on their length, not `varchar(n)`: `text = text` is an
 * operator of pg_catalog, `varchar = varchar` is not, and an operator a role defines for
 * `varchar` in a schema on the search path would be picked over the cast to text (see
 * sql/queue-schema.ts).
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 *
 * Append-only: never edit a migration that has shipped; change the schema in a new one.
 */
export function createJobsTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobsTable', 1795939200000, schema, up, down);
}
