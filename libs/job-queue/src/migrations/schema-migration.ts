import { MigrationInterface, QueryRunner } from 'typeorm';
import { DEFAULT_SCHEMA } from '../job-queue.constants';
import { QueueSchema } from '../sql/queue-schema';

/** A migration class, as TypeORM's `migrations` option takes it. */
export type MigrationClass = new () => MigrationInterface;

type Step = (queryRunner: QueryRunner, schema: QueueSchema) => Promise<void>;

/**
 * TypeORM tells migrations apart by name (its last 13 digits are the timestamp): the default
 * schema's keep the names they shipped with, another schema's carry it (`CreateJobsTable_billing_
 * 1795939200000`), so the migrations of several schemas can share one migrations table.
 */
function migrationName(base: string, timestamp: number, schema: QueueSchema): string {
  return schema.name === DEFAULT_SCHEMA
    ? `${base}${timestamp}`
    : `${base}_${schema.name}_${timestamp}`;
}

/**
 * Runs `step` with `search_path` set to `pg_catalog, pg_temp`, then puts the caller's back: every
 * name the DDL resolves (the operators of CHECK constraints and index predicates, stored as they
 * resolve now; types; functions) is then pg_catalog's, whatever the migrating role's path holds.
 * A session-level setting, so it works whether or not TypeORM wraps the migration in a
 * transaction; a failed transaction rolls it back by itself (the restore then fails, ignored).
 */
async function withPinnedSearchPath(queryRunner: QueryRunner, step: () => Promise<void>) {
  const [{ path }] = (await queryRunner.query(
    `SELECT pg_catalog.current_setting('search_path') AS path`,
  )) as Array<{ path: string }>;
  await queryRunner.query(
    `SELECT pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', false)`,
  );
  try {
    await step();
  } finally {
    await queryRunner
      .query(`SELECT pg_catalog.set_config('search_path', $1, false)`, [path])
      .catch(() => undefined);
  }
}

/** A migration class of `schema`, named for it, whose steps run with the pinned search_path. */
export function schemaMigration(
  base: string,
  timestamp: number,
  schema: QueueSchema,
  up: Step,
  down: Step,
): MigrationClass {
  const name = migrationName(base, timestamp, schema);
  // Named after the migration, like a hand-written one (TypeORM reads `name` first anyway).
  const classes = {
    [name]: class implements MigrationInterface {
      name = name;

      up(queryRunner: QueryRunner): Promise<void> {
        return withPinnedSearchPath(queryRunner, () => up(queryRunner, schema));
      }

      down(queryRunner: QueryRunner): Promise<void> {
        return withPinnedSearchPath(queryRunner, () => down(queryRunner, schema));
      }
    },
  };
  return classes[name];
}
