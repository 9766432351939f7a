import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `jobs` table with the seed's columns (names kept) plus `run_at`, `heartbeat_at`,
 * `unique_key`, `result`, `updated_at`, `run_token` and the backoff columns, the indexes that are
 * not about claiming, and the insert trigger that wakes idle workers.
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
 * Append-only: never edit a migration that has shipped; change the schema in a new one.
 */
export class CreateJobsTable1795939200000 implements MigrationInterface {
  name = 'CreateJobsTable1795939200000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE jobs (
        id             bigserial PRIMARY KEY,
        job_type       varchar(255) NOT NULL,
        priority       integer NOT NULL DEFAULT 100,
        status         varchar(16) NOT NULL DEFAULT 'pending',
        data           jsonb NOT NULL DEFAULT '{}'::jsonb,
        progress       smallint NOT NULL DEFAULT 0,
        current_stage  varchar(255),
        events_count   integer NOT NULL DEFAULT 0,
        worker_id      varchar(255),
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
        unique_key     varchar(255),
        result         jsonb,
        updated_at     timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT jobs_status_check
          CHECK (status IN ('pending', 'claimed', 'running', 'completed', 'failed', 'cancelled')),
        CONSTRAINT jobs_progress_check CHECK (progress BETWEEN 0 AND 100),
        CONSTRAINT jobs_attempts_check CHECK (attempts >= 0 AND (max_attempts IS NULL OR max_attempts >= 1))
      )
    `);
    // At most one unfinished job per key; finished jobs keep their key for the record.
    await queryRunner.query(`
      CREATE UNIQUE INDEX jobs_unique_key_idx ON jobs (unique_key)
        WHERE unique_key IS NOT NULL AND status IN ('pending', 'claimed', 'running')
    `);
    // The reaper and findStale() look only at held jobs, ordered by lease age.
    await queryRunner.query(`
      CREATE INDEX jobs_lease_idx ON jobs (heartbeat_at)
        WHERE status IN ('claimed', 'running')
    `);
    // One notification per statement: enqueueMany of 10,000 jobs wakes workers once, not 10,000 times.
    await queryRunner.query(`
      CREATE FUNCTION jobs_notify_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        PERFORM pg_notify('job_queue_jobs_inserted', '');
        RETURN NULL;
      END
      $$
    `);
    await queryRunner.query(`
      CREATE TRIGGER jobs_notify_inserted AFTER INSERT ON jobs
        FOR EACH STATEMENT EXECUTE FUNCTION jobs_notify_inserted()
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TRIGGER jobs_notify_inserted ON jobs`);
    await queryRunner.query(`DROP FUNCTION jobs_notify_inserted()`);
    await queryRunner.query(`DROP TABLE jobs`);
  }
}
