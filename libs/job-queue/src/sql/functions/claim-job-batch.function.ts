import { QueueSchema } from '../queue-schema';

/*
 * `claim_job_batch` as CREATE FUNCTION defines it: the signature (the seed's three parameters,
 * then optional ones with defaults), the settings and the plpgsql body around one statement (a
 * version of the claim: `claim-job-batch.v1.ts`, `claim-job-batch.v2.ts`). Shipped with
 * CreateClaimJobBatchFunction (1795939200001) and frozen: every version so far is installed with
 * this very text around it.
 *
 * The SET clauses pin the plan to ordered scans of jobs_claim_idx. Without statistics (a new
 * table, or a sudden backlog before autovacuum analyzes it) the planner otherwise picks a bitmap
 * scan of every pending row of a type plus a sort, several times slower. Turning sorts off adds
 * a huge cost to the plan (the merge of the heads still sorts, a few rows), which would switch
 * on JIT, compiling the statement at every call: jit off. A per-type LIMIT is a column, not a
 * known number, so the planner guesses a tenth of the backlog; with nothing but pending rows it
 * then hashed the whole table to find the claimed ones: nested loops only (each join here is a
 * few rows, and the update finds its rows by primary key). search_path: nothing in the body
 * resolves outside pg_catalog (the tables are named with their schema).
 */
const FIRST_PARAMETERS = `
      p_worker_id text,
      p_job_types text[],
      p_batch_size integer,
      p_now timestamptz DEFAULT NULL,
      p_start boolean DEFAULT false,
      p_type_caps integer[] DEFAULT NULL,
      p_max_attempts integer[] DEFAULT NULL,
      p_backoff_base_ms integer[] DEFAULT NULL,
      p_backoff_max_ms integer[] DEFAULT NULL,
      p_backoff_jitter float8[] DEFAULT NULL`;

const FIRST_SETTINGS = `
      SET search_path = pg_catalog, pg_temp
      SET enable_bitmapscan = off SET enable_sort = off SET jit = off
      SET enable_hashjoin = off SET enable_mergejoin = off`;

/** The definition around a plpgsql `body`, with a signature's parameters and settings. */
const definitionOf = (
  schema: QueueSchema,
  parameters: string,
  settings: string,
  body: string,
  declarations = '',
): string => `${schema.claimJobBatch}(${parameters}
    ) RETURNS SETOF ${schema.jobs} LANGUAGE plpgsql${settings}
    AS $fn$${declarations}
    BEGIN${body}
    END
    $fn$
  `;

const claimJobBatchDefinition = (schema: QueueSchema, statement: string): string =>
  definitionOf(
    schema,
    FIRST_PARAMETERS,
    FIRST_SETTINGS,
    `
      RETURN QUERY ${statement};`,
  );

/** The CREATE FUNCTION of CreateClaimJobBatchFunction, running `statement`. */
export function createClaimJobBatch(schema: QueueSchema, statement: string): string {
  const definition = claimJobBatchDefinition(schema, statement);
  return `
    CREATE FUNCTION ${definition}`;
}

/**
 * Replaces the body of `claim_job_batch` (same signature, same SET clauses). CREATE OR REPLACE
 * keeps the function's owner and its grants (the runtime role's EXECUTE, no PUBLIC).
 */
export function replaceClaimJobBatch(schema: QueueSchema, statement: string): string {
  const definition = claimJobBatchDefinition(schema, statement);
  return `
    CREATE OR REPLACE FUNCTION ${definition}`;
}

/*
 * The second signature, of ResumeClaimsAtCursors (1795939200009): the first one's ten
 * parameters, then four aligned arrays, the positions after which the claim resumes reading each
 * type and priority (see `claimJobBatchQueryV3`). A call that passes none (the seed's three
 * arguments, an older worker's ten, a worker's claim from the heads) runs V2's statement word
 * for word, as before: V3's segments cost a claim of ten types about a third more on a quiet
 * table (bench/README.md, "Shaped by measurement"), for nothing when there is no cursor.
 *
 * The settings are the first signature's, plus `plan_cache_mode = force_generic_plan`: the plan
 * is pinned by the settings above, not by the arguments, so planning it again for each call
 * buys nothing, and the plan cache's default plans each of a connection's first five calls (and
 * five more after every ANALYZE of `jobs`, which autovacuum runs often on a busy queue) at about
 * twice the cost of the claim itself (bench/README.md, "Shaped by measurement"). The generic
 * plan is the one the plan tests check.
 */
const SECOND_PARAMETERS = `${FIRST_PARAMETERS},
      p_after_job_types text[] DEFAULT NULL,
      p_after_priorities integer[] DEFAULT NULL,
      p_after_created_at timestamptz[] DEFAULT NULL,
      p_after_ids bigint[] DEFAULT NULL`;

const SECOND_SETTINGS = `${FIRST_SETTINGS}
      SET plan_cache_mode = force_generic_plan`;

const claimJobBatchDefinitionV2 = (
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
): string =>
  definitionOf(
    schema,
    SECOND_PARAMETERS,
    SECOND_SETTINGS,
    `
      IF pg_catalog.cardinality(p_after_job_types) > 0 THEN
        RETURN QUERY ${afterCursors};
      ELSE
        RETURN QUERY ${fromHeads};
      END IF;`,
  );

/*
 * The second signature's body since AddConcurrencyLimits (1795939200011): first, in a statement
 * of its own, the lock of each requested type that has a concurrency limit in `job_types`, in
 * the order of their names (two claims never wait for each other in a cycle); held until the
 * claim commits, so claims of a limited type take turns on every node. The claim's statement
 * comes after: in READ COMMITTED each statement of the function takes a new snapshot, so it sees
 * what the claims before it committed (a lock and a read in one statement would read with the
 * snapshot taken before the wait). With a limited type, `limited` runs (`claimJobBatchQueryV4`,
 * for all the requested types); with none, the claim is the one before, word for word, after
 * one look-up of `job_types` by primary key per requested type.
 */
const claimJobBatchDefinitionV3 = (
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
  limited: string,
): string =>
  definitionOf(
    schema,
    SECOND_PARAMETERS,
    SECOND_SETTINGS,
    `
      PERFORM pg_catalog.pg_advisory_xact_lock(${schema.claimLockClass}, pg_catalog.hashtext(t.job_type))
      FROM (SELECT lt.job_type FROM ${schema.jobTypes} lt
            WHERE lt.job_type = ANY (p_job_types)
              AND (lt.concurrency_per_key IS NOT NULL OR lt.global_concurrency IS NOT NULL)
            ORDER BY lt.job_type) AS t;
      GET DIAGNOSTICS limited_types = ROW_COUNT;
      IF limited_types > 0 THEN
        RETURN QUERY ${limited};
      ELSIF pg_catalog.cardinality(p_after_job_types) > 0 THEN
        RETURN QUERY ${afterCursors};
      ELSE
        RETURN QUERY ${fromHeads};
      END IF;`,
    `
    DECLARE
      limited_types bigint;`,
  );

/** Replaces the second signature's body with V3's (same signature, settings and grants). */
export function replaceClaimJobBatchV3(
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
  limited: string,
): string {
  return `
    CREATE OR REPLACE FUNCTION ${claimJobBatchDefinitionV3(schema, fromHeads, afterCursors, limited)}`;
}

/*
 * The second signature's body since AddRateLimits (1795939200012): V3's, where a rate limit
 * (`job_types.rate_max`) also makes a type limited, and where a call with a limited type runs
 * `release` (the expired starts and the opened keys, `releaseRateBlockedKeys`) before `limited`,
 * each statement with a snapshot that sees the one before.
 */
const claimJobBatchDefinitionV4 = (
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
  release: string,
  limited: string,
): string =>
  definitionOf(
    schema,
    SECOND_PARAMETERS,
    SECOND_SETTINGS,
    `
      PERFORM pg_catalog.pg_advisory_xact_lock(${schema.claimLockClass}, pg_catalog.hashtext(t.job_type))
      FROM (SELECT lt.job_type FROM ${schema.jobTypes} lt
            WHERE lt.job_type = ANY (p_job_types)
              AND (lt.concurrency_per_key IS NOT NULL OR lt.global_concurrency IS NOT NULL
                   OR lt.rate_max IS NOT NULL)
            ORDER BY lt.job_type) AS t;
      GET DIAGNOSTICS limited_types = ROW_COUNT;
      IF limited_types > 0 THEN${release}
        RETURN QUERY ${limited};
      ELSIF pg_catalog.cardinality(p_after_job_types) > 0 THEN
        RETURN QUERY ${afterCursors};
      ELSE
        RETURN QUERY ${fromHeads};
      END IF;`,
    `
    DECLARE
      limited_types bigint;
      released_jobs bigint;`,
  );

/** Replaces the second signature's body with V4's (same signature, settings and grants). */
export function replaceClaimJobBatchV4(
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
  release: string,
  limited: string,
): string {
  return `
    CREATE OR REPLACE FUNCTION ${claimJobBatchDefinitionV4(schema, fromHeads, afterCursors, release, limited)}`;
}

/** Replaces the second signature's body with V2's, as ResumeClaimsAtCursors installed it. */
export function replaceClaimJobBatchV2(
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
): string {
  return `
    CREATE OR REPLACE FUNCTION ${claimJobBatchDefinitionV2(schema, fromHeads, afterCursors)}`;
}

/** The first signature's argument types, as DROP FUNCTION and GRANT name it. */
export const CLAIM_JOB_BATCH_ARGUMENTS_V1 = `text, text[], integer, timestamptz, boolean, integer[],
     integer[], integer[], integer[], float8[]`;

/** The second signature's argument types. */
export const CLAIM_JOB_BATCH_ARGUMENTS_V2 = `${CLAIM_JOB_BATCH_ARGUMENTS_V1}, text[], integer[],
     timestamptz[], bigint[]`;

/**
 * The CREATE FUNCTION of the second signature: `afterCursors` when the call passes cursors,
 * `fromHeads` when it passes none.
 */
export function createClaimJobBatchV2(
  schema: QueueSchema,
  fromHeads: string,
  afterCursors: string,
): string {
  return `
    CREATE FUNCTION ${claimJobBatchDefinitionV2(schema, fromHeads, afterCursors)}`;
}
