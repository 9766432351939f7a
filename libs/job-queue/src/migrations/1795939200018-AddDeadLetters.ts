import { QueryRunner } from 'typeorm';
import { createDeadLetterJobV1, DEAD_LETTERED_WHEN } from '../sql/functions/dead-letter-job.v1';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  // A type is never its own dead letter: each failed copy would make another, without end.
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      ADD COLUMN dead_letter_type text,
      ADD CONSTRAINT job_types_dead_letter_type_length_check
        CHECK (char_length(dead_letter_type) <= 255),
      ADD CONSTRAINT job_types_dead_letter_type_check CHECK (dead_letter_type <> job_type)`);
  await queryRunner.query(createDeadLetterJobV1(schema));
  await queryRunner.query(`
    CREATE TRIGGER jobs_dead_lettered AFTER UPDATE OF status ON ${schema.jobs}
    FOR EACH ROW WHEN (${DEAD_LETTERED_WHEN})
    EXECUTE FUNCTION ${schema.deadLetter}()`);
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`DROP TRIGGER jobs_dead_lettered ON ${schema.jobs}`);
  await queryRunner.query(`DROP FUNCTION ${schema.deadLetter}()`);
  await queryRunner.query(`ALTER TABLE ${schema.jobTypes} DROP COLUMN dead_letter_type`);
}

/**
 * Dead letters: a job that ran and failed for good is also enqueued as a job of its type's
 * dead-letter type (the handler's `deadLetter`), with `data` `{ data, error, sourceJobId }`.
 *
 * - `job_types.dead_letter_type`, stored by each worker at start for the types it handles (NULL
 *   for a handler without the option).
 * - The trigger `jobs_dead_lettered`: a job became `failed` having spent an attempt, so the copy
 *   is inserted in the same statement (see `createDeadLetterJobV1`).
 *
 * Additive: the previous release's workers neither store nor read the column, and their failures
 * go through the trigger too (a type keeps the dead-letter type the last new worker stored).
 * `down()` drops them; copies already made stay ordinary jobs.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addDeadLettersFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddDeadLetters', 1795939200018, schema, up, down);
}
