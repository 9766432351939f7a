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

module.exports = { JOBS_SCHEMA, qualified, JOBS, claimStatement };
