import { QueryRunner } from 'typeorm';
import {
  replaceClaimJobBatchV3,
  replaceClaimJobBatchV4,
} from '../sql/functions/claim-job-batch.function';
import { claimJobBatchQueryV2 } from '../sql/functions/claim-job-batch.v2';
import { claimJobBatchQueryV3 } from '../sql/functions/claim-job-batch.v3';
import { claimJobBatchQueryV4 } from '../sql/functions/claim-job-batch.v4';
import { claimJobBatchQueryV5, releaseRateBlockedKeys } from '../sql/functions/claim-job-batch.v5';
import { QueueSchema } from '../sql/queue-schema';
import { MigrationClass, schemaMigration } from './schema-migration';

async function up(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes}
      ADD COLUMN rate_max integer,
      ADD COLUMN rate_per_ms integer,
      ADD COLUMN rate_by_key boolean NOT NULL DEFAULT false,
      ADD CONSTRAINT job_types_rate_limit_check CHECK (
        (rate_max IS NULL) = (rate_per_ms IS NULL) AND rate_max > 0 AND rate_per_ms > 0
        AND (NOT rate_by_key OR rate_max IS NOT NULL))`);
  // One row per claim and type (or key): a claim of 50 jobs writes one. No primary key: rows
  // are only ever read as a window, newest last, and deleted once out of it.
  await queryRunner.query(`
    CREATE TABLE ${schema.jobRateStarts} (
      job_type   text NOT NULL,
      rate_key   text NOT NULL,
      started_at timestamptz NOT NULL,
      starts     integer NOT NULL CHECK (starts > 0)
    )`);
  await queryRunner.query(`
    CREATE INDEX job_rate_starts_window_idx ON ${schema.jobRateStarts}
      (job_type, rate_key, started_at)`);
  await queryRunner.query(`
    CREATE TABLE ${schema.jobRateBlocked} (
      job_type text NOT NULL,
      rate_key text NOT NULL,
      opens_at timestamptz NOT NULL,
      PRIMARY KEY (job_type, rate_key)
    )`);
  // The claim looks up the keys of its types whose windows have opened.
  await queryRunner.query(`
    CREATE INDEX job_rate_blocked_opens_idx ON ${schema.jobRateBlocked} (job_type, opens_at)`);
  await queryRunner.query(
    replaceClaimJobBatchV4(
      schema,
      claimJobBatchQueryV2(schema),
      claimJobBatchQueryV3(schema),
      releaseRateBlockedKeys(schema),
      claimJobBatchQueryV5(schema),
    ),
  );
}

async function down(queryRunner: QueryRunner, schema: QueueSchema): Promise<void> {
  await queryRunner.query(
    replaceClaimJobBatchV3(
      schema,
      claimJobBatchQueryV2(schema),
      claimJobBatchQueryV3(schema),
      claimJobBatchQueryV4(schema),
    ),
  );
  // Jobs set aside for a key's rate only: without rate limits nothing would move them back.
  await queryRunner.query(`
    UPDATE ${schema.jobs} AS j SET status = 'pending', updated_at = now()
    FROM ${schema.jobRateBlocked} b
    WHERE j.status = 'waiting' AND j.job_type = b.job_type AND j.concurrency_key = b.rate_key`);
  await queryRunner.query(`DROP TABLE ${schema.jobRateBlocked}`);
  await queryRunner.query(`DROP TABLE ${schema.jobRateStarts}`);
  await queryRunner.query(`
    ALTER TABLE ${schema.jobTypes} DROP COLUMN rate_max, DROP COLUMN rate_per_ms,
      DROP COLUMN rate_by_key`);
}

/**
 * Rate limits enforced by the claim: at most `rate_max` starts in any window of `rate_per_ms`
 * (sliding, on the database's clock) per type, or per `concurrency_key` with `rate_by_key`,
 * stored in `job_types` by each worker at start (the handler's `rateLimit`).
 *
 * - `job_rate_starts`: the starts each claim made, per type or key, kept while in the window.
 * - `job_rate_blocked`: keys at their rate limit whose pending jobs a claim set aside as
 *   `waiting`, with the moment their windows open; the claim moves them back then.
 * - `claim_job_batch`'s body: a rate-limited type is limited (its claims take turns, as for the
 *   concurrency limits), and the claim counts, records and releases as above.
 *
 * Additive: the previous release's workers claim through the new body. The runtime role needs
 * SELECT, INSERT and DELETE on both tables and UPDATE on `job_rate_blocked` (README, "Database
 * roles"). `down()` moves the jobs set aside for a key's rate back to `pending`.
 *
 * Made for one schema at a time (see `jobQueueMigrationsFor`).
 */
export function addRateLimitsFor(schema: QueueSchema): MigrationClass {
  return schemaMigration('AddRateLimits', 1795939200012, schema, up, down);
}
