import { Job, JobStatus } from 'nest-pg-job-queue';

/**
 * A job as the example's API shows it, to an admin as much as to the client that enqueued it:
 * where it is and what came of it, never which worker (host and pid) ran it, nor a stack trace.
 * The job's `data` stays in the table too: the client sent it, the API need not echo it.
 */
export interface JobResponse {
  id: string;
  type: string;
  status: JobStatus;
  priority: number;
  /** 0..100, with the handler's name for where it is. */
  progress: number;
  stage: string | null;
  attempts: number;
  maxAttempts: number | null;
  runAt: Date;
  createdAt: Date;
  startedAt: Date | null;
  completedAt: Date | null;
  result: unknown;
  /** The last failure's message only (see errorMessage). */
  lastError: string | null;
}

/** An absolute file path (POSIX, file:// or Windows), at the start or after a space or quote. */
const ABSOLUTE_PATH = /(^|[\s'"`(=])(?:file:\/\/)?(?:\/|[A-Za-z]:\\)[^\s'"`)]+/g;

/**
 * The first line of a job's `last_error` ("Error: thumbnail service answered 503"), with no
 * absolute file path and no worker name ("Worker host:1234:9f3a2c stopped heartbeating…" from
 * the stale-job reaper). The full text, stack and all, stays in the `jobs` table's `last_error`
 * for operators: the API never shows it, not even to an admin.
 */
export function errorMessage(lastError: string | null): string | null {
  if (lastError === null) return null;
  return lastError
    .split(/\r?\n/, 1)[0]
    .replace(/^Worker \S+ stopped heartbeating/, 'Its worker stopped heartbeating')
    .replace(ABSOLUTE_PATH, '$1<path>');
}

export function toJobResponse(job: Job): JobResponse {
  return {
    id: job.id,
    type: job.jobType,
    status: job.status,
    priority: job.priority,
    progress: job.progress,
    stage: job.currentStage,
    attempts: job.attempts,
    maxAttempts: job.maxAttempts,
    runAt: job.runAt,
    createdAt: job.createdAt,
    startedAt: job.startedAt,
    completedAt: job.completedAt,
    result: job.result,
    lastError: errorMessage(job.lastError),
  };
}
