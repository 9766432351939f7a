import { JobStatus } from '../entities/job-status.enum';
import { ListJobsQuery } from '../interfaces/list-jobs.interface';
import { decodeJobListCursor } from './job-list-cursor';
import { inputValidator } from './input.validator';
import { Validator } from './validator';
import { checkJobId, checkJobType, checkUniqueKey } from './job-input.checks';

const LIST_JOBS_KEYS = ['id', 'type', 'status', 'uniqueKeyPrefix', 'limit', 'cursor'] as const;
/** The page `listJobs` returns: its default and largest size. */
export const DEFAULT_JOB_LIST_PAGE = 50;
export const MAX_JOB_LIST_PAGE = 500;
const STATUSES: readonly string[] = Object.values(JobStatus);
const listInput: Validator = inputValidator('listJobs');

/** `listJobs`' query, checked: each filter `null` when not given. */
export interface CheckedListJobsQuery {
  id: string | null;
  type: string | null;
  status: JobStatus | null;
  uniqueKeyPrefix: string | null;
  limit: number;
  /** The id of the last job of the previous page, `null` for the first page. */
  after: string | null;
}

/**
 * Checks `listJobs()`'s query; each bad field throws an `InvalidJobInputError` naming it and
 * the value given, before any statement is sent.
 */
export function checkListJobsQuery(query: unknown): CheckedListJobsQuery {
  listInput.knownKeys(listInput.plainObject('query', query), LIST_JOBS_KEYS);
  const { id, type, status, uniqueKeyPrefix, limit, cursor } = query as ListJobsQuery;
  if (status !== undefined && !STATUSES.includes(status as string)) {
    listInput.fail('status', status, `one of ${STATUSES.join(', ')}`);
  }
  let after: string | null = null;
  if (cursor !== undefined) {
    after = decodeJobListCursor(cursor) ?? null;
    if (after === null) {
      listInput.fail('cursor', cursor, 'the nextCursor of an earlier listJobs page');
    }
  }
  return {
    id: id === undefined ? null : checkJobId('id', id),
    type: type === undefined ? null : checkJobType('type', type),
    status: status ?? null,
    uniqueKeyPrefix:
      uniqueKeyPrefix === undefined ? null : checkUniqueKey('uniqueKeyPrefix', uniqueKeyPrefix),
    limit:
      limit === undefined
        ? DEFAULT_JOB_LIST_PAGE
        : listInput.integer('limit', limit, 1, MAX_JOB_LIST_PAGE),
    after,
  };
}
