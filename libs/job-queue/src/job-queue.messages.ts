import { inspect } from 'node:util';

/** Renders a value for an error message: short, unambiguous (`'5'` vs `5`), never throws. */
export function describeValue(value: unknown): string {
  if (typeof value === 'bigint') return `${value}n`;
  return inspect(value, {
    depth: 1,
    breakLength: Infinity,
    maxStringLength: 80,
    maxArrayLength: 5,
  });
}

export const INVALID_OPTION = (option: string, value: unknown, expected: string): string =>
  `Invalid JobQueueModule option "${option}": ${describeValue(value)}. Expected ${expected}.`;

export const UNKNOWN_OPTION = (option: string, known: readonly string[]): string =>
  `Unknown JobQueueModule option "${option}". Known options: ${known.join(', ')}.`;

export const INVALID_INPUT = (field: string, value: unknown, expected: string): string =>
  `Invalid job ${field}: ${describeValue(value)}. Expected ${expected}.`;

export const UNKNOWN_INPUT_OPTION = (kind: string, field: string, known: readonly string[]) =>
  `Unknown ${kind} option "${field}". Known options: ${known.join(', ')}.`;

/** `enqueueMany` was given something other than an array of jobs. */
export const BATCH_NOT_AN_ARRAY = (value: unknown): string =>
  `Invalid enqueueMany argument "jobs": ${describeValue(value)}. Expected an array of jobs.`;

/** More jobs in one `enqueueMany` call than `maxBatchSize`. */
export const BATCH_TOO_MANY_JOBS = (count: number, maxBatchSize: number): string =>
  `Too many jobs for one enqueueMany call: ${count}, at most ${maxBatchSize} (maxBatchSize). ` +
  `Split the batch into several calls (one transaction through manager keeps them all or none).`;

/** More bytes of `data` JSON in one `enqueueMany` call than `maxBatchBytes`; `index` crossed it. */
export const BATCH_TOO_MANY_BYTES = (index: number, maxBatchBytes: number): string =>
  `Too much data for one enqueueMany call: jobs[${index}] takes the data JSON past ` +
  `${maxBatchBytes} bytes (maxBatchBytes). Split the batch into several calls.`;

export const JOB_NOT_FOUND = (jobId: unknown): string =>
  `No job with id ${describeValue(jobId)} exists.`;

/** `runSchedule` was given a name no schedule has. */
export const SCHEDULE_NOT_FOUND = (name: string): string =>
  `No schedule named ${describeValue(name)} exists (schedules() lists those there are).`;

export const JOB_NOT_IN_STATE = (jobId: string, status: string, action: string): string =>
  `Job ${jobId} is ${status} and cannot be ${action}.`;

export const JOB_KEY_HELD = (
  jobId: string,
  action: string,
  key: string,
  holderId: string,
  holderStatus: string,
): string =>
  `Job ${jobId} cannot be ${action}: its unique key ${describeValue(key)} is held by job ` +
  `${holderId} (${holderStatus}). Cancel or remove that job first, or enqueue again with another key.`;

export const SCHEDULE_OWNED_BY_HANDLER = (name: string): string =>
  `Invalid job name: schedule ${describeValue(name)} belongs to @JobHandler(${describeValue(name)}) ` +
  `(its cron option). Change the cron there, or give this schedule another name.`;

export const JOB_WAIT_TIMED_OUT = (jobId: string, timeoutMs: number): string =>
  `Job ${jobId} did not finish within ${timeoutMs} ms (waitForJob timeoutMs); it is left as it is.`;

export const WAIT_ENDED_BY_SHUTDOWN = (jobId: string): string =>
  `waitForJob gave up on job ${jobId}: the application is shutting down; the job is left as it is.`;
