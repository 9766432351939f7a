import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // The primary key leads with the job: every read is one job's rows in order, and the cascade
  // of a pruned job finds its rows through it. No other index, so a row costs one index entry.
  await queryRunner.query(`
    CREATE TABLE ${schema.jobEvents} (
      job_id     bigint NOT NULL REFERENCES ${schema.jobs} (id) ON DELETE CASCADE,
      id         bigint GENERATED ALWAYS AS IDENTITY,
      run_token  integer NOT NULL,
      attempt    integer NOT NULL,
      at         timestamptz NOT NULL,
      kind       text NOT NULL,
      message    text,
      data       jsonb,
      PRIMARY KEY (job_id, id),
      CONSTRAINT job_events_kind_check
        CHECK (kind IN ('claimed', 'progress', 'log', 'retrying', 'completed', 'failed',
                        'cancelled', 'rescued', 'snoozed', 'dropped')),
      CONSTRAINT job_events_message_length_check CHECK (char_length(message) <= 2000)
    )
  `);
  // events_count counted progress writes until now; it counts a job's rows of job_events from
  // here on, and no job has any yet. Only rows that wrote progress have a count to clear.
  await queryRunner.query(`UPDATE ${schema.jobs} SET events_count = 0 WHERE events_count <> 0`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TABLE ${schema.jobEvents}`);
}

/**
 * `job_events`: each job's log, in the order it happened: what the queue did with the job
 * (claimed, retrying with the error's first line, completed, failed, cancelled, rescued,
 * snoozed), the progress its runs wrote, and the handler's own `ctx.log` lines. Rows are written
 * by the statements that make those transitions, and only when they land (a superseded run
 * writes none); they go with their job (ON DELETE CASCADE), so retention deletes them too.
 * `jobs.events_count` counts them.
 *
 * Additive for readers; workers of the previous release write no rows. The runtime role needs
 * SELECT and INSERT on it (README, "Database roles"); the cascade deletes as the table's owner.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function createJobEventsTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobEventsTable', 1795939200010, schema, up, down);
}
