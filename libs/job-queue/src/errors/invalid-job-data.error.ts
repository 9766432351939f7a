import { PermanentJobError } from './job-run-errors';

/** One field of a job's `data` that failed its `dto`'s validation, and the constraints it failed. @publicApi */
export interface JobDataFieldError {
  /** The field's path in the job: `data.month`, `data.items[2].sku`. */
  field: string;
  /** The names of the class-validator constraints it failed (`isDate`, `matches`, …). */
  constraints: string[];
}

/**
 * A job's `data` failed the validation of its handler's `dto` (`@JobHandler(type, { dto })`):
 * the job fails for good, since no retry changes its data. The message and `fields` name the
 * fields and constraints, never the values (payloads may hold personal data).
 *
 * @publicApi
 */
export class InvalidJobDataError extends PermanentJobError {
  constructor(
    /** The dto class's name. */
    readonly dto: string,
    readonly fields: JobDataFieldError[],
  ) {
    super(`Job data does not fit ${dto}: ${describeFieldErrors(fields)}`);
  }
}

/** `data.month (matches), data.requestedAt (isDate)`: fields and constraint names, no values. */
export function describeFieldErrors(fields: JobDataFieldError[]): string {
  return fields.map(({ field, constraints }) => `${field} (${constraints.join(', ')})`).join(', ');
}
