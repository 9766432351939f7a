import { ValidateBy } from 'class-validator';
import { JobStatus } from 'nest-pg-job-queue';
import {
  EmptyIsAbsent,
  IfSent,
  IsIntIn,
  IsOneOf,
  IsRefused,
  IsText,
  QueryInt,
} from '../../common/validation/validators';
import { badCursorMessage, decodeJobCursor } from '../job-cursor';

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 200;

const LIMITS = `(limit 1 to ${MAX_LIST_LIMIT}, default ${DEFAULT_LIST_LIMIT})`;

/** A `cursor` that decodeJobCursor accepts: the nextCursor of an earlier answer. */
function IsJobCursor(): PropertyDecorator {
  return ValidateBy({
    name: 'isJobCursor',
    validator: {
      validate: (value) => decodeJobCursor(value) !== undefined,
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
