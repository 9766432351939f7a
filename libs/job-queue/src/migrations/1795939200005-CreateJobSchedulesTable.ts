import { QueryRunner } from 'typeorm';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    CREATE TABLE ${schema.jobSchedules} (
      name         text PRIMARY KEY,
      cron         text NOT NULL,
      timezone     text NOT NULL DEFAULT 'UTC',
      catch_up     text NOT NULL DEFAULT 'once',
      job_type     text NOT NULL,
      data         jsonb NOT NULL DEFAULT 'null'::jsonb,
      priority     integer NOT NULL DEFAULT 100,
      max_attempts integer,
      source       text NOT NULL DEFAULT 'schedule',
      next_fire_at timestamptz,
      last_fire_at timestamptz,
      created_at   timestamptz NOT NULL DEFAULT now(),
      updated_at   timestamptz NOT NULL DEFAULT now(),
      CONSTRAINT job_schedules_name_length_check CHECK (char_length(name) <= 255),
      CONSTRAINT job_schedules_cron_length_check CHECK (char_length(cron) <= 255),
      CONSTRAINT job_schedules_job_type_length_check CHECK (char_length(job_type) <= 255),
      CONSTRAINT job_schedules_catch_up_check CHECK (catch_up IN ('once', 'skip')),
      CONSTRAINT job_schedules_source_check CHECK (source IN ('handler', 'schedule')),
      CONSTRAINT job_schedules_max_attempts_check CHECK (max_attempts >= 1)
    )
  `);
  // What every node's tick reads: the schedules due by now, earliest first.
  await queryRunner.query(`
    CREATE INDEX job_schedules_next_fire_at_idx ON ${schema.jobSchedules} (next_fire_at)
      WHERE next_fire_at IS NOT NULL
  `);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TABLE ${schema.jobSchedules}`);
}

/**
 * `job_schedules`: recurring jobs, one row per schedule, made by `QueueService.schedule()`
 * (`source = 'schedule'`) or by a `@JobHandler` with `cron` when a worker boots (`'handler'`).
 * `next_fire_at` is the earliest fire time no job has been enqueued for yet (NULL: the expression
 * fires no more); a node enqueues a fire time's job in the same statement that moves it on, and
 * only if the row still holds the value it read, so each fire time yields one job however many
 * nodes tick. `last_fire_at`: the newest fire time a job was enqueued for.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function createJobSchedulesTableFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('CreateJobSchedulesTable', 1795939200005, schema, up, down);
}
