'use strict';
// Where our library's objects live, for the bench's own SQL (fills, counters, locks, claims).
// The bench's apps use the library's default schema (its `schema` option); nothing else in
// bench/ names the schema. Identifiers are quoted, so any schema name works.

/** The schema of our `jobs` table and `claim_job_batch` function: the library's default. */
const JOBS_SCHEMA = 'job_queue';

const quote = (name) => `"${name.replace(/"/g, '""')}"`;

/** `"schema"."name"`: the table or function `name` in JOBS_SCHEMA. */
const qualified = (name) => `${quote(JOBS_SCHEMA)}.${quote(name)}`;

const JOBS = qualified('jobs');

/**
 * The claim as the worker sends it (marking the jobs running at once): $1 worker id, $2 job
 * types, $3 batch size. Per-type caps and policy are left NULL.
 */
const claimStatement = `SELECT * FROM ${qualified('claim_job_batch')}($1, $2::text[], $3, p_start => true)`;

/**
 * The claim as a worker sends it between its claims from the heads: resuming the type's priority
 * after a cursor ($4 priority, $5 created_at as text, $6 id).
 */
const claimAfterStatement = `SELECT * FROM ${qualified('claim_job_batch')}($1, $2::text[], $3, p_start => true,
  p_after_job_types => $2::text[], p_after_priorities => ARRAY[$4::integer],
  p_after_created_at => ARRAY[$5::timestamptz], p_after_ids => ARRAY[$6::bigint])`;

module.exports = { JOBS_SCHEMA, qualified, JOBS, claimStatement, claimAfterStatement };
