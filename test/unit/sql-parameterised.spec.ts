import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';

const REPO_ROOT = resolve(__dirname, '..', '..');
const SCANNED_DIRS = ['libs/job-queue/src', 'migrations'];

/**
 * The only values interpolated into SQL text: constants of ours, never input. Keyed by file (`*`:
 * any scanned file) and the interpolated expression's source text; each says why a bind
 * parameter cannot be used.
 */
const ALLOWED_INTERPOLATIONS: Record<string, string> = {
  '* schema.uniqueStateCounts':
    'the unique index\'s predicate function, `"<schema>".job_unique_state_counts`: checked and quoted',
  '* uniqueKeyCountsSql(schema)':
    "the unique index's predicate (unique-keys.sql.ts): the checked schema and constants",
  "* uniqueKeyCountsSql(schema, 'j.')":
    "the unique index's predicate for the row `j` (unique-keys.sql.ts): the checked schema and constants",
  "* uniqueKeyCountsSql(schema, 'h.')":
    "the unique index's predicate for the holder `h` (unique-keys.sql.ts): the checked schema and constants",
  "* storedUniqueKeySql('k.unique_key', 'k.window_ms', '$2')":
    "a stored key from input columns at the queue's clock (unique-keys.sql.ts): column names, a placeholder",
  "* storedUniqueKeySql('given.unique_key', 'given.window_ms', '$2')":
    "a stored key from input columns at the queue's clock (unique-keys.sql.ts): column names, a placeholder",
  '* queueNowSql(now)':
    "the queue's clock (queue-now.sql.ts) from a placeholder the caller names: constants",
  "* queueNowSql('$2')": "the queue's clock from the bind parameter $2 (queue-now.sql.ts)",
  "* queueNowSql('$5')": "the queue's clock from the bind parameter $5 (queue-now.sql.ts)",
  '* queueNowSql(log.now)':
    "the queue's clock from the shape's bind parameter, `$10` or `$18` (queue-now.sql.ts)",
  '* queueNowSql(WITH_LOG.now)':
    "the queue's clock from the logged shape's bind parameter `$18` (queue-now.sql.ts)",
  '* QUEUE_NOW': "the queue's clock from a bind parameter of the same file (queue-now.sql.ts)",
  'libs/job-queue/src/sql/queue-now.sql.ts param':
    'a bind parameter placeholder (`$3`) named by the calling statement: constants',
  "libs/job-queue/src/sql/functions/prune-jobs.v1.ts jobTypesSkipScanCte(schema, FINISHED_STATUS, ' AND (SELECT lock.got FROM lock)')":
    "the finished types' skip scan, gated on the prune lock (job-types-skip-scan.sql.ts): the checked schema and constants",
  'libs/job-queue/src/sql/job-types-skip-scan.sql.ts statusCondition':
    'a status predicate on `j`, a constant of the calling file (FINISHED_STATUS, PENDING_STATUS, LISTED_J)',
  'libs/job-queue/src/sql/job-types-skip-scan.sql.ts firstOnly':
    "a condition of the first descent only, a constant of the calling file ('' or the prune lock's)",
  'libs/job-queue/src/terminus/health.queries.ts jobTypesSkipScanCte(schema, PENDING_STATUS)':
    "the pending types' skip scan (job-types-skip-scan.sql.ts): the checked schema and a constant",
  'libs/job-queue/src/terminus/health.queries.ts jobTypesSkipScanCte(schema, FINISHED_STATUS)':
    "the finished types' skip scan (job-types-skip-scan.sql.ts): the checked schema and a constant",
  'libs/job-queue/src/dashboard/throughput.query.ts jobTypesSkipScanCte(schema, FINISHED_STATUS)':
    "the finished types' skip scan (job-types-skip-scan.sql.ts): the checked schema and a constant",
  'libs/job-queue/src/sql/list-jobs.query.ts jobTypesSkipScanCte(schema, LISTED_J)':
    "the listed types' skip scan (job-types-skip-scan.sql.ts): the checked schema and a constant",
  'libs/job-queue/src/sql/redrive-jobs.query.ts LISTED_I':
    "jobs_list_idx's status predicate: a constant of the same file",
  'libs/job-queue/src/sql/redrive-jobs.query.ts FILTERS':
    'the optional filters on bind parameters $3 and $4: a constant of the same file',
  'libs/job-queue/src/sql/redrive-jobs.query.ts jobTypesSkipScanCte(schema, LISTED_J)':
    "the listed types' skip scan (job-types-skip-scan.sql.ts): the checked schema and a constant",
  'libs/job-queue/src/sql/redrive-jobs.query.ts ctes(schema)':
    'the skip scan over types or nothing (TYPES, NO_TYPES): the checked schema and constants',
  'libs/job-queue/src/sql/redrive-jobs.query.ts next(schema)':
    "a batch's ids (NEXT_OF_TYPE, NEXT_OF_EVERY_TYPE, NEXT_OF_IDS): the checked schema and constants",
  'libs/job-queue/src/sql/list-jobs.query.ts LISTED_I':
    "jobs_list_idx's status predicate: a constant of the same file",
  'libs/job-queue/src/sql/list-jobs.query.ts listedPagesOfType(schema)':
    "the type's pages per status: the checked schema and constants of the same file",
  'libs/job-queue/src/sql/list-jobs.query.ts IN_FLIGHT_ROW':
    "jobs_lease_idx's status predicate: a constant of the same file",
  'libs/job-queue/src/sql/list-jobs.query.ts inFlightCte(schema)':
    'the CTE of the jobs in flight: the checked schema and constants',
  'libs/job-queue/src/sql/list-jobs.query.ts listedColumns()':
    "the jobs columns but data and meta, read from the Job entity's metadata: constants",
  'libs/job-queue/src/sql/list-jobs.query.ts UNFINISHED':
    "the unique-key prefix index's status predicate: a constant of the same file",
  'libs/job-queue/src/sql/functions/prune-jobs.v1.ts now':
    "the time retention counts back from: `pg_catalog.now()` (V1) or the queue's clock from `$9` (V2)",
  'libs/job-queue/src/sql/functions/prune-jobs.v2.ts pruneJobsQueryV2(schema)':
    "DDL cannot take parameters; the function's body, from the checked schema and constants",
  'libs/job-queue/src/sql/insert-jobs.query.ts uniqueKey':
    "the stored key's expression: an input column, or the keyed insert's lateral column",
  "libs/job-queue/src/sql/insert-jobs.query.ts insertedColumns('t.unique_key')":
    'the columns an insert writes, with the input column as the key: constants of the same file',
  "libs/job-queue/src/sql/insert-jobs.query.ts insertedColumns('k.stored_key')":
    'the columns an insert writes, with the stored key: constants of the same file',
  'libs/job-queue/src/sql/insert-jobs.query.ts INPUT_ROWS':
    "the input rows' columns from the bind parameter $1: a constant of the same file",
  'libs/job-queue/src/sql/insert-jobs.query.ts DUE':
    "each row's due time from its columns and the queue's clock: a constant of the same file",
  'libs/job-queue/src/sql/insert-jobs.query.ts INSERTED_IDS':
    'what the insert returns: a constant of the same file',
  "libs/job-queue/src/sql/insert-jobs.query.ts storedUniqueKeySql('t.unique_key', 't.window_ms', '$3')":
    "a stored key from input columns at the queue's clock (unique-keys.sql.ts): column names, a placeholder",
  'libs/job-queue/src/migrations/1795939200013-AddUniquenessPolicies.ts maxLength':
    'DDL cannot take parameters; a numeric constant of the same file',
  '* schema.jobRateStarts':
    'the rate windows\' starts table, `"<schema>".job_rate_starts`: checked and quoted',
  '* schema.jobRateBlocked':
    'the keys at their rate limit, `"<schema>".job_rate_blocked`: checked and quoted',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts release':
    'the statements before a limited claim (claim-job-batch.v5.ts): the checked schema, constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts claimJobBatchDefinitionV4(schema, fromHeads, afterCursors, release, limited)':
    'DDL cannot take parameters; the second signature with its V4 body, from constants and the checked schema',
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts owner':
    'the CTE whose row names the type or key (`typed`, `limits`, `window_rows`, `takes`, `full_keys`): constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts rateKey':
    "the key a window is counted for: `''` or a CTE column, constants of the same file",
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts columns':
    'the columns a head read returns: constants of the same file',
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts limit':
    "a head read's LIMIT: a column expression of the claim's own CTEs",
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts perMs':
    "a window's length: a column expression of the claim's own CTEs",
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts RATE_START_MARGIN_MS':
    'the start margin, a numeric constant of the same file',
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts rateWindowStart('COALESCE(lt.rate_per_ms, 0)')":
    "a window's start over a column: constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts rateWindowStart('lt.rate_per_ms')":
    "a window's start over a column: constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts startsInWindow(schema, 'typed', \"''\")":
    "a type's starts in its window: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts startsInWindow(schema, 'window_rows', 'window_rows.concurrency_key')":
    "a key's starts in its window: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts fromTheHead(\n      schema,\n      'limits',\n      'j.id, j.priority, j.created_at, j.concurrency_key',\n      'limits.room + LEAST(limits.room, 16)',\n    )":
    "the window's head read: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts keySlotHoldersSql(schema, 'window_rows', 'window_rows.ordered')":
    "the jobs holding the slots of a window row's key: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts bestOfType(schema, 'limits', 'limits.room', '')":
    "the heads of a type read after its cursors (V3's): schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts bestOfType(schema, 'takes', 'takes.take', LOCK)":
    "the locking read of a type read after its cursors (V3's): schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v5.ts keySlotHoldersSql(schema, 'full_keys', 'full_keys.ordered')":
    "the jobs holding a full key's slots, to lock: the checked schema and constants",
  'libs/job-queue/src/sql/functions/claim-job-batch.v5.ts SET_ASIDE_PER_KEY':
    'a LIMIT, a numeric constant (claim-job-batch.v4.ts)',
  'libs/job-queue/src/sql/next-rate-opening.query.ts RATE_START_MARGIN_MS':
    'the start margin, a numeric constant (claim-job-batch.v5.ts)',
  '* schema.releaseKeySlot':
    "the key-slot trigger's function in the queue's schema: checked and quoted",
  '* schema.deadLetter':
    "the dead-letter trigger's function in the queue's schema: checked and quoted",
  'libs/job-queue/src/migrations/1795939200018-AddDeadLetters.ts DEAD_LETTERED_WHEN':
    "the trigger's WHEN clause (dead-letter-job.v1.ts): a constant",
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts schema.claimLockClass':
    "the claim lock's first key, an int4 derived from the checked schema name by SHA-256",
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts limited':
    'the statement of a claim of limited types (claim-job-batch.v4.ts, v5.ts): the checked schema, constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts afterCursors':
    'the statement of a claim after cursors (claim-job-batch.v3.ts): the checked schema, constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts fromHeads':
    'the statement of a claim from the heads (claim-job-batch.v2.ts): the checked schema, constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts claimJobBatchDefinitionV3(schema, fromHeads, afterCursors, limited)':
    'DDL cannot take parameters; the second signature with its V3 body, from constants and the checked schema',
  'libs/job-queue/src/sql/functions/claim-job-batch.v4.ts columns':
    'the columns a head read returns: constants of the same file',
  'libs/job-queue/src/sql/functions/release-key-slot.v1.ts owner':
    "the row naming the key (`NEW`, or a CTE of the claim's): constants of the calling files",
  'libs/job-queue/src/sql/functions/claim-job-batch.v4.ts owner':
    'the CTE whose row names the type or key (`limits`, `takes`, `window_keys`, `full_keys`): constants',
  'libs/job-queue/src/sql/functions/claim-job-batch.v4.ts limit':
    "a head read's LIMIT: a column expression of the claim's own CTEs (`limits.room`, `takes.take`)",
  'libs/job-queue/src/sql/functions/release-key-slot.v1.ts holdsKeySlotSql(ordered)':
    "which jobs hold a key's slot (release-key-slot.v1.ts), over a CTE column: constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v4.ts fromTheHead(\n      schema,\n      'limits',\n      'j.id, j.priority, j.created_at, j.concurrency_key',\n      'limits.room + LEAST(limits.room, 16)',\n    )":
    "the window's head read: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v4.ts keySlotHoldersSql(schema, 'window_rows', 'window_rows.ordered')":
    "the jobs holding the slots of a window row's key: the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v4.ts bestOfType(schema, 'limits', 'limits.room', '')":
    "the heads of a type without a per-key limit, after its cursors (V3's): schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v4.ts bestOfType(schema, 'takes', 'takes.take', LOCK)":
    "the locking read of a type without a per-key limit (V3's): the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v4.ts keySlotHoldersSql(schema, 'full_keys', 'full_keys.ordered')":
    "the jobs holding a full key's slots, to lock: the checked schema and constants",
  'libs/job-queue/src/sql/functions/claim-job-batch.v4.ts SET_ASIDE_PER_KEY':
    'a LIMIT, a numeric constant of the same file',
  "libs/job-queue/src/sql/functions/release-key-slot.v1.ts keySlotHoldersSql(schema, 'NEW', 'ordered')":
    "which jobs hold a key's slot, over the function's own variable: constants of the same file",
  'libs/job-queue/src/sql/functions/release-key-slot.v1.ts PENDING_AGAIN_PAYLOAD':
    "a function body's literal: the insert channel's constant payload (queue-schema.ts)",
  'libs/job-queue/src/migrations/1795939200011-AddConcurrencyLimits.ts statuses':
    'the status lists of the CHECK and the unique index, before and after: constants of the same file',
  'libs/job-queue/src/migrations/1795939200011-AddConcurrencyLimits.ts KEY_SLOT_RELEASED_WHEN':
    "the trigger's WHEN clause (release-key-slot.v1.ts): a constant",
  '* schema.jobDependencies':
    'the dependency edges table, `"<schema>".job_dependencies`: checked and quoted',
  '* schema.resolveDependants':
    "the dependency trigger's function in the queue's schema: checked and quoted",
  '* schema.keepDependencies':
    "the retention trigger's function in the queue's schema: checked and quoted",
  'libs/job-queue/src/migrations/1795939200017-AddJobDependencies.ts DEPENDENCY_FINISHED_WHEN':
    "the trigger's WHEN clause (resolve-dependants.v1.ts): a constant",
  'libs/job-queue/src/migrations/1795939200017-AddJobDependencies.ts DEPENDENCIES_DELETED_WHEN':
    "the trigger's WHEN clause (resolve-dependants.v1.ts): a constant",
  'libs/job-queue/src/sql/cancel-job.query.ts which':
    "which jobs a cancel takes, by id or by flow: constants of the same file, each a placeholder's comparison",
  'libs/job-queue/src/sql/functions/resolve-dependants.v1.ts dependency':
    "the dependency's id: the trigger's `NEW.id`, or the plan test's placeholder",
  "libs/job-queue/src/sql/functions/resolve-dependants.v1.ts blockedDependantsSql(schema, 'NEW.id')":
    "the finished job's blocked dependants: the checked schema and the trigger's own row",
  'libs/job-queue/src/sql/functions/resolve-dependants.v1.ts schema.eventsChannel':
    "a function body's literal: the events channel, `<schema>_job_events`, of the checked schema",
  "libs/job-queue/src/sql/functions/resolve-dependants.v1.ts oneJobEventPayload('moved', `'failed'::text`, `''::text`)":
    "a failed dependant's event payload (job-events.notify.ts): the loop's record and constants",
  'libs/job-queue/src/sql/functions/resolve-dependants.v1.ts PENDING_AGAIN_PAYLOAD':
    "a function body's literal: the insert channel's constant payload (queue-schema.ts)",
  'libs/job-queue/src/sql/functions/resolve-dependants.v1.ts FINISHED_STATUSES':
    'the finished statuses: a constant of the same file',
  "libs/job-queue/src/sql/functions/prune-jobs.v3.ts jobTypesSkipScanCte(schema, FINISHED_STATUS, ` AND (SELECT lock.got FROM lock) AND j.job_type >= COALESCE($10::text, '')`)":
    "the finished types' skip scan from the cursor's type on, gated on the prune lock (job-types-skip-scan.sql.ts): the checked schema, constants and a placeholder",
  'libs/job-queue/src/sql/functions/prune-jobs.v3.ts FINISHED_STATUSES':
    'the finished statuses: a constant (resolve-dependants.v1.ts)',
  "libs/job-queue/src/sql/functions/prune-jobs.v3.ts queueNowSql('$9')":
    "the queue's clock from the bind parameter $9 (queue-now.sql.ts)",
  'libs/job-queue/src/sql/functions/prune-jobs.v3.ts pruneJobsQueryV3(schema)':
    'DDL cannot take parameters; the body is the statement of the same file, from the checked schema and constants',
  'libs/job-queue/src/migrations/1795939200020-PrunePastKeptJobs.ts signature(schema, PRUNE_JOBS_V3_ARGUMENTS)':
    "the function's signature, as DROP names it: the checked schema and fixed argument types",
  'libs/job-queue/src/sql/release-stuck-jobs.query.ts CUTOFF':
    "how long a job may wait, back from the queue's clock: placeholders, a constant of the same file",
  "libs/job-queue/src/sql/release-stuck-jobs.query.ts queueNowSql('$3')":
    "the queue's clock from the bind parameter $3 (queue-now.sql.ts)",
  '* schema.reopenDependants':
    "the reopen trigger's function in the queue's schema: checked and quoted",
  'libs/job-queue/src/migrations/1795939200019-CountEachDependencyOnce.ts DEPENDENCY_REOPENED_WHEN':
    "the trigger's WHEN clause (reopen-dependants.v1.ts): a constant",
  'libs/job-queue/src/migrations/1795939200019-CountEachDependencyOnce.ts FINISHED_STATUSES':
    'the finished statuses: a constant (resolve-dependants.v1.ts)',
  "libs/job-queue/src/sql/functions/reopen-dependants.v1.ts blockedDependantsSql(schema, 'NEW.id')":
    "the reopened job's blocked dependants (resolve-dependants.v1.ts): the checked schema and the trigger's own row",
  'libs/job-queue/src/sql/functions/reopen-dependants.v1.ts FINISHED_STATUSES':
    'the finished statuses: a constant (resolve-dependants.v1.ts)',
  '* schema.jobs':
    'the queue\'s table, `"<schema>".jobs`: a table name cannot be a parameter; the schema name ' +
    'is an identifier checked against SCHEMA_NAME_PATTERN at boot (option `schema`) and quoted',
  '* schema.jobTypes': 'the per-type settings table, `"<schema>".job_types`: checked and quoted',
  '* schema.jobSchedules':
    'the cron schedules table, `"<schema>".job_schedules`: checked and quoted',
  '* SCHEDULE_COLUMNS':
    'the column list of job_schedules that statements return: a constant of sql/, never input',
  '* schema.jobScheduleTicks':
    'the cron ticks record, `"<schema>".job_schedule_ticks`: checked and quoted',
  '* schema.jobEvents': 'the job log table, `"<schema>".job_events`: checked and quoted',
  '* schema.jobStats': 'the stats snapshot table, `"<schema>".job_stats`: checked and quoted',
  '* schema.quoted': 'the queue\'s schema, `"<schema>"`: an identifier, checked and quoted',
  '* schema.claimJobBatch': 'the claim function, `"<schema>".claim_job_batch`: checked and quoted',
  '* schema.notifyInserted': "the insert trigger's function in the queue's schema: checked, quoted",
  '* schema.insertedChannel':
    'LISTEN takes an identifier, and a function body a literal: the channel is the checked ' +
    'schema name plus a fixed suffix',
  '* schema.cancelledChannel':
    'LISTEN takes an identifier: the channel is the checked schema name plus a suffix',
  '* schema.pausedChannel':
    'LISTEN takes an identifier: the channel is the checked schema name plus a suffix',
  'libs/job-queue/src/sql/claim-job-batch.query.ts columnsOfClaim().selectList':
    'a select list cannot be a parameter; it is the column names of job.entity.ts, never input',
  'libs/job-queue/src/sql/finish-jobs.query.ts STILL_OURS':
    'a constant WHERE clause shared by the two shapes of the outcome write; values are parameters',
  'libs/job-queue/src/sql/finish-jobs.query.ts SUPERSEDED':
    'a constant final SELECT shared by the two shapes of the outcome write; no values in it',
  'libs/job-queue/src/sql/release-jobs.query.ts RELEASED_SET':
    'a constant SET clause shared by the two hand-back statements; values are parameters',
  'libs/job-queue/src/sql/release-jobs.query.ts NOTIFY_RELEASED':
    'a constant tail (the notification, the result) shared by the two hand-back statements; ' +
    'the channel and payload are parameters',
  'libs/job-queue/src/migrations/1795939200000-CreateJobsTable.ts CREATED_SCHEMA_COMMENT':
    'COMMENT ON takes a literal, not a parameter; the marker is a constant of the same file',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts definition':
    'DDL cannot take parameters; the frozen definition of the claim around one version of its ' +
    'statement, built from constants and the checked schema',
  'libs/job-queue/src/migrations/1795939200001-CreateClaimJobBatchFunction.ts CLAIM_JOB_BATCH_SIGNATURE(schema)':
    'DROP/REVOKE name the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/1795939200007-PinPrunePlan.ts PRUNE_JOBS_SIGNATURE(schema)':
    'ALTER FUNCTION names the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/sql/functions/claim-job-batch.function.ts claimJobBatchDefinitionV2(schema, fromHeads, afterCursors)':
    'DDL cannot take parameters; the definition of the claim with its second signature, built ' +
    'from constants and the checked schema',
  'libs/job-queue/src/sql/functions/claim-job-batch.v3.ts limit':
    "a segment scan's LIMIT: a column of the claim's own CTEs (`types.cap`, `takes.take`)",
  'libs/job-queue/src/sql/functions/claim-job-batch.v3.ts lock':
    'the locking clause of the candidates, or nothing: constants of the same file',
  'libs/job-queue/src/sql/functions/claim-job-batch.v3.ts owner':
    'the CTE whose row names the type (`types`, `takes`): constants of the same file',
  'libs/job-queue/src/sql/functions/claim-job-batch.v3.ts segmentScan(schema, limit, lock)':
    'the segment scan, built from the checked schema and the constants above',
  "libs/job-queue/src/sql/functions/claim-job-batch.v3.ts bestOfType(schema, 'types', 'types.cap', '')":
    "a type's best rows across its segments, from the checked schema and constants",
  "libs/job-queue/src/sql/functions/claim-job-batch.v3.ts bestOfType(schema, 'takes', 'takes.take', LOCK)":
    "a type's best rows across its segments, locked: the checked schema and constants",
  'libs/job-queue/src/migrations/copy-execute-grants.ts from':
    'DDL names a function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/copy-execute-grants.ts to':
    'DDL names a function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/1795939200014-PruneAtQueueTime.ts before':
    'DDL names the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/1795939200014-PruneAtQueueTime.ts after':
    'DROP FUNCTION names the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/1795939200009-ResumeClaimsAtCursors.ts before':
    'DROP FUNCTION names the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/migrations/1795939200009-ResumeClaimsAtCursors.ts after':
    'DROP FUNCTION names the function by its signature: the checked schema and fixed types',
  'libs/job-queue/src/sql/claim-job-batch.query.ts CLAIM_CALL(schema)':
    "the claim function's call, from the checked schema and bind parameters only",
  'libs/job-queue/src/sql/claim-job-batch.query.ts CLAIMED_EVENTS':
    'the NOTIFY CTEs of sql/job-events.notify.ts over the claimed jobs; channel and origin are parameters',
  'libs/job-queue/src/sql/finish-jobs.query.ts FINISH_JOBS_WRITE(schema)':
    'the outcome write shared by its plain and notifying shapes: the checked schema and constants',
  'libs/job-queue/src/sql/finish-jobs.query.ts FINISH_EVENTS':
    'the NOTIFY CTEs of sql/job-events.notify.ts over the landed outcomes; values are parameters',
  'libs/job-queue/src/sql/finish-jobs.query.ts COMPLETE_JOBS_WRITE(schema)':
    'the completion write shared by its plain and notifying shapes: the checked schema and constants',
  'libs/job-queue/src/sql/finish-jobs.query.ts COMPLETE_EVENTS':
    'the NOTIFY CTEs of sql/job-events.notify.ts over the completed jobs; values are parameters',
  'libs/job-queue/src/sql/rescue-stale-jobs.query.ts RESCUE_STALE_JOBS_WITH(schema)':
    'the rescue shared by its plain and notifying shapes: the checked schema and constants',
  'libs/job-queue/src/sql/rescue-stale-jobs.query.ts RESCUE_EVENTS':
    'the NOTIFY CTEs of sql/job-events.notify.ts over the rescued jobs; values are parameters',
  'libs/job-queue/src/sql/cancel-job.query.ts CANCEL_JOB(schema)':
    'the cancel statement, extended by its notifying shape: the checked schema and constants',
  'libs/job-queue/src/sql/cancel-job.query.ts CANCELLED_EVENT':
    'the event payload expression of sql/job-events.notify.ts: constants, origin a parameter',
  'libs/job-queue/src/sql/update-progress.query.ts UPDATE_PROGRESS_WRITE(schema)':
    'the progress write, shared by its plain and notifying shapes: the checked schema and constants',
  'libs/job-queue/src/sql/update-progress.query.ts PROGRESS_EVENT':
    'the event payload expression of sql/job-events.notify.ts: constants, origin a parameter',
  'libs/job-queue/src/sql/update-progress.query.ts UPDATE_RUN_WRITE(schema)':
    "a run's progress and log write shared by its two shapes: the checked schema and constants",
  "libs/job-queue/src/sql/update-progress.query.ts givenLogRowsCte('updated', 6)":
    "the log rows CTE of sql/job-log-rows.ts over the statement's own CTE; rows are parameters",
  "libs/job-queue/src/sql/update-progress.query.ts insertLogRowsCte(schema, 'SELECT * FROM log_rows')":
    'the insert of the log rows (sql/job-log-rows.ts): the checked schema and constants',
  'libs/job-queue/src/sql/update-progress.query.ts RUN_PROGRESS_EVENT':
    'the event payload expression of sql/job-events.notify.ts: constants, origin a parameter',
  'libs/job-queue/src/sql/cancel-job.query.ts claimedRowMissingSql(schema)':
    "the test for a run's missing claimed row (sql/job-log-rows.ts): the checked schema, constants",
  "libs/job-queue/src/sql/cancel-job.query.ts insertLogRowsCte(schema, endedRunRowsSql('cancelled', 'cancelled', 'NULL::text'))":
    "the cancel's log rows (sql/job-log-rows.ts): the checked schema and constants",
  'libs/job-queue/src/sql/rescue-stale-jobs.query.ts claimedRowMissingSql(schema)':
    "the test for a run's missing claimed row (sql/job-log-rows.ts): the checked schema, constants",
  "libs/job-queue/src/sql/rescue-stale-jobs.query.ts insertLogRowsCte(schema, endedRunRowsSql('rescued', 'rescued', 'x.last_error'))":
    "the rescue's log rows (sql/job-log-rows.ts): the checked schema and constants",
  'libs/job-queue/src/sql/finish-jobs.query.ts log.arrays':
    'what the logged outcome write adds to its input arrays: constants of the same file',
  'libs/job-queue/src/sql/finish-jobs.query.ts log.columns':
    'what the logged outcome write adds to its input columns: constants of the same file',
  'libs/job-queue/src/sql/finish-jobs.query.ts log.set':
    'what the logged outcome write adds to its SET: constants of the same file',
  'libs/job-queue/src/sql/finish-jobs.query.ts log.returning':
    'what the logged outcome write adds to its RETURNING: constants of the same file',
  "libs/job-queue/src/sql/finish-jobs.query.ts firstLineSql('done.last_error')":
    "the first line of the error (sql/job-log-rows.ts) of the statement's own CTE: constants",
  'libs/job-queue/src/sql/finish-jobs.query.ts FINISH_JOBS_LOGGED_WRITE(schema)':
    'the logged outcome write shared by its two shapes: the checked schema and constants',
  'libs/job-queue/src/sql/finish-jobs.query.ts FINISH_LOGGED_EVENTS':
    'the NOTIFY CTEs of sql/job-events.notify.ts over the finished jobs; values are parameters',
  'libs/job-queue/src/sql/job-log-rows.ts arrays':
    'the unnest() of each log row array, placeholders and fixed types built in the same function',
  'libs/job-queue/src/sql/job-log-rows.ts landed':
    "the name of the caller's CTE of landed writes: a constant of the caller",
  'libs/job-queue/src/sql/job-log-rows.ts rows':
    "the caller's query of the rows to insert: a constant of the caller",
  'libs/job-queue/src/sql/job-log-rows.ts ended':
    "the name of the caller's CTE of ended runs: a constant of the caller",
  'libs/job-queue/src/sql/job-log-rows.ts kind':
    "a row kind: a JobLogKind literal of the caller's, never input",
  'libs/job-queue/src/sql/job-log-rows.ts message':
    "the caller's SQL expression of the row's message: a constant of the caller",
  'libs/job-queue/src/sql/job-log-rows.ts text':
    "the caller's SQL expression of an error text: a constant of the caller",
  'libs/job-queue/src/sql/job-log-rows.ts MAX_LOG_MESSAGE_CHARS':
    'a number constant of job-queue.constants.ts',
  'libs/job-queue/src/sql/job-events.notify.ts ITEM':
    'the JSON item of one event row: a constant of the same file',
  'libs/job-queue/src/sql/job-events.notify.ts rows':
    "the name of the statement's own CTE of event rows: a constant of the caller",
  'libs/job-queue/src/sql/job-events.notify.ts PAYLOAD_BUDGET':
    'a number constant of the same file (bytes of one payload)',
  'libs/job-queue/src/sql/job-events.notify.ts origin':
    "a placeholder text (`$1::text`) of the caller: the origin's value is a bind parameter",
  'libs/job-queue/src/sql/job-events.notify.ts channel':
    "a placeholder text (`$13::text`) of the caller: the channel's value is a bind parameter",
  'libs/job-queue/src/sql/functions/prune-jobs.v1.ts pruneJobsQueryV1(schema)':
    'DDL cannot take parameters; the prune query body is shared with the plan test',
};

const isAllowed = (file: string, expression: string): boolean =>
  `${file} ${expression}` in ALLOWED_INTERPOLATIONS || `* ${expression}` in ALLOWED_INTERPOLATIONS;

/** Uppercase SQL keywords: two of them make a string SQL (one is often just prose, "LISTEN …"). */
const SQL_KEYWORDS =
  /\b(SELECT|INSERT|UPDATE|DELETE|FROM|WHERE|VALUES|RETURNING|JOIN|SET|INTO|CREATE|DROP|ALTER|TABLE|FUNCTION|LISTEN|UNLISTEN|NOTIFY)\b/g;

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

function looksLikeSql(text: string): boolean {
  return new Set(text.match(SQL_KEYWORDS) ?? []).size >= 2;
}

/** The SQL argument of a call, when it is a `query(sql, …)` or `queryRows(db, sql, …)` call. */
function sqlArgument(call: ts.CallExpression): ts.Expression | undefined {
  const callee = call.expression;
  const name = ts.isPropertyAccessExpression(callee)
    ? callee.name.text
    : ts.isIdentifier(callee)
      ? callee.text
      : undefined;
  if (name === 'query') return call.arguments[0];
  if (name === 'queryRows') return call.arguments[1];
  return undefined;
}

/** The string pieces of `a + b + …` when any of them is a string literal. */
function concatenatedText(node: ts.BinaryExpression): string | undefined {
  const parts: string[] = [];
  const visit = (expr: ts.Expression): void => {
    if (ts.isBinaryExpression(expr) && expr.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      visit(expr.left);
      visit(expr.right);
    } else if (ts.isStringLiteral(expr) || ts.isNoSubstitutionTemplateLiteral(expr)) {
      parts.push(expr.text);
    } else if (ts.isTemplateExpression(expr)) {
      parts.push(expr.head.text, ...expr.templateSpans.map((span) => span.literal.text));
    }
  };
  visit(node);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

interface Finding {
  file: string;
  line: number;
  what: string;
}

/** Every place in `code` (of file `rel`) where SQL text is built from a value, not parameters. */
function findInterpolatedSql(rel: string, code: string): Finding[] {
  const source = ts.createSourceFile(rel, code, ts.ScriptTarget.ES2022, true);
  const findings: Finding[] = [];
  const report = (node: ts.Node, what: string) =>
    findings.push({
      file: rel,
      line: source.getLineAndCharacterOfPosition(node.getStart()).line + 1,
      what,
    });
  const checkTemplate = (node: ts.TemplateExpression, passedToQuery: boolean) => {
    const text = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)].join(' ');
    if (!passedToQuery && !looksLikeSql(text)) return;
    for (const span of node.templateSpans) {
      const expression = span.expression.getText(source);
      if (!isAllowed(rel, expression)) {
        report(span, `\${${expression}} interpolated into SQL`);
      }
    }
  };
  // The SQL arguments of query calls, checked as such: not checked again as free-standing strings.
  const checked = new Set<ts.Node>();
  const visit = (node: ts.Node, parentIsConcat = false): void => {
    if (ts.isCallExpression(node)) {
      const sql = sqlArgument(node);
      if (sql && ts.isTemplateExpression(sql)) checkTemplate(sql, true);
      if (sql && ts.isBinaryExpression(sql)) report(sql, 'SQL built by concatenation');
      if (sql) checked.add(sql);
    }
    if (ts.isTemplateExpression(node) && !checked.has(node)) checkTemplate(node, false);
    const isConcat =
      ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken;
    if (isConcat && !parentIsConcat && !checked.has(node)) {
      const text = concatenatedText(node);
      if (text && looksLikeSql(text)) report(node, 'SQL built by concatenation');
    }
    ts.forEachChild(node, (child) => visit(child, isConcat));
  };
  visit(source);
  return findings;
}

describe('SQL is parameterised', () => {
  const files = SCANNED_DIRS.flatMap((dir) => tsFiles(join(REPO_ROOT, dir)));

  it('scans the library and the migrations', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(files.some((file) => file.includes('sql/insert-jobs.query.ts'))).toBe(true);
    expect(files.some((file) => file.includes('migrations/'))).toBe(true);
  });

  it('builds no SQL text from values: every value is a bind parameter', () => {
    const findings = files.flatMap((file) =>
      findInterpolatedSql(relative(REPO_ROOT, file), readFileSync(file, 'utf8')),
    );
    expect(findings.map((f) => `${f.file}:${f.line} ${f.what}`)).toEqual([]);
  });

  it('uses every allowlist entry (a stale entry would hide nothing and mislead)', () => {
    for (const key of Object.keys(ALLOWED_INTERPOLATIONS)) {
      const at = key.indexOf(' '); // an expression may hold spaces, a file never does
      const [file, expression] = [key.slice(0, at), key.slice(at + 1)];
      const sources =
        file === '*'
          ? files.map((path) => readFileSync(path, 'utf8'))
          : [readFileSync(join(REPO_ROOT, file), 'utf8')];
      expect({ key, used: sources.some((code) => code.includes(`\${${expression}}`)) }).toEqual({
        key,
        used: true,
      });
    }
  });

  it('catches interpolation and concatenation (the checker itself works)', () => {
    const check = (code: string) => findInterpolatedSql('libs/job-queue/src/probe.ts', code);
    expect(check('db.query(`SELECT * FROM jobs WHERE id = ${id}`);')).toHaveLength(1);
    expect(check(`queryRows(db, 'SELECT * FROM jobs WHERE id = ' + id, []);`)).toHaveLength(1);
    expect(check('const sql = `UPDATE jobs SET status = ${s} WHERE id = 1`;')).toHaveLength(1);
    expect(check('db.query(`SELECT * FROM jobs WHERE id = $1`, [id]);')).toEqual([]);
    expect(check('log(`LISTEN connection lost: ${message}`);')).toEqual([]);
  });
});
