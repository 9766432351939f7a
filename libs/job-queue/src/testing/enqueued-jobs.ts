import { isDeepStrictEqual } from 'node:util';
import { Job } from '../entities/job.entity';
import { Queryable, queryRows, toJob } from '../sql/queryable';
import { queueSchema } from '../sql/queue-schema';
import { EnqueuedJobFilter } from './testing.types';

/** Most jobs a failed assertion lists: about a screenful. */
const MAX_LISTED = 20;

/** Every job of `type` (or of any type), oldest first: what a test enqueued, and what ran. */
export async function readEnqueuedJobs(
  db: Queryable,
  schemaName: string,
  type: string | undefined,
): Promise<Job[]> {
  const schema = queueSchema(schemaName);
  const rows = await queryRows(
    db,
    `SELECT * FROM ${schema.jobs} WHERE $1::text IS NULL OR job_type = $1::text ORDER BY id`,
    [type ?? null],
  );
  return rows.map(toJob);
}

/** Whether `job` is one `filter` describes (its `data`: a partial, deep match). */
export function matchesFilter(job: Job, filter: EnqueuedJobFilter): boolean {
  if (filter.type !== undefined && job.jobType !== filter.type) return false;
  if (filter.priority !== undefined && job.priority !== filter.priority) return false;
  if (filter.runAt !== undefined && job.runAt.getTime() !== filter.runAt.getTime()) return false;
  if (filter.status !== undefined) {
    const statuses = Array.isArray(filter.status) ? filter.status : [filter.status];
    if (!statuses.includes(job.status)) return false;
  }
  return filter.data === undefined || containsDeep(job.data, filter.data);
}

/** `actual` holds everything `expected` does: objects by their given keys, the rest equal. */
function containsDeep(actual: unknown, expected: unknown): boolean {
  if (isPlainObject(expected) && isPlainObject(actual)) {
    return Object.entries(expected).every(([key, value]) => containsDeep(actual[key], value));
  }
  return isDeepStrictEqual(actual, expected);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The filter as the message names it: its fields, payload included (test-only). */
export function describeFilter(filter: EnqueuedJobFilter): string {
  const { manager: _manager, ...shown } = filter;
  void _manager;
  return JSON.stringify(shown);
}

/** The jobs, one line each (id, type, status, run time, data), at most `MAX_LISTED` of them. */
export function listJobs(jobs: readonly Job[]): string {
  if (jobs.length === 0) return '  (no job was enqueued)';
  const lines = jobs
    .slice(0, MAX_LISTED)
    .map(
      (job) =>
        `  #${job.id} ${job.jobType} ${job.status} priority ${job.priority}, ` +
        `run at ${job.runAt.toISOString()}, data ${JSON.stringify(job.data)}`,
    );
  const more = jobs.length - lines.length;
  if (more > 0) lines.push(`  … and ${more} more`);
  return lines.join('\n');
}
