import { ValidateBy } from 'class-validator';
import { isJobListCursor, JobStatus } from 'nest-pg-job-queue';
import {
  EmptyIsAbsent,
  IfSent,
  IsIntIn,
  IsOneOf,
  IsRefused,
  IsText,
  QueryInt,
} from '../../common/validation/validators';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

const LIMITS = `(limit 1 to ${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT})`;
/** Far more than a cursor needs: what a refusal shows of the value sent. */
const SHOWN_CURSOR_LENGTH = 100;

/** What a malformed `cursor` is told, with (the start of) what was sent. */
function badCursorMessage(value: unknown): string {
  const text = typeof value === 'string' ? value : '';
  const shown = text ? JSON.stringify(text.slice(0, SHOWN_CURSOR_LENGTH)) : '';
  return (
    `cursor must be the nextCursor of an earlier GET /jobs answer` +
    (shown ? ` (got ${shown}${text.length > SHOWN_CURSOR_LENGTH ? '…' : ''})` : '')
  );
}

/**
 * A `cursor` that `QueueService.listJobs` made (the nextCursor of an earlier answer), checked
 * here so that a bad one is refused in this route's words; `?cursor=a&cursor=b` (an array) too.
 */
function IsJobCursor(): PropertyDecorator {
  return ValidateBy({
    name: 'isJobCursor',
    validator: {
      validate: (value) => isJobListCursor(value),
      defaultMessage: (args) => badCursorMessage(args?.value),
    },
  });
}

/** `GET /jobs?status=&type=&limit=&cursor=`. */
export class ListJobsQuery {
  // The offset paging this route had: refused (first) with what to send instead, not ignored.
  @IsRefused(
    `by GET /jobs: pages are walked with cursor: send the previous answer's nextCursor ${LIMITS}`,
  )
  page?: unknown;

  @IsRefused(`by GET /jobs: the page size is limit ${LIMITS}`)
  pageSize?: unknown;

  @EmptyIsAbsent()
  @IfSent()
  @IsOneOf(Object.values(JobStatus))
  status?: JobStatus;

  @IfSent()
  @IsText()
  type?: string;

  @QueryInt()
  @IfSent()
  @IsIntIn(1, MAX_LIST_LIMIT)
  limit?: number;

  @EmptyIsAbsent()
  @IfSent()
  @IsJobCursor()
  cursor?: string;
}
