import type { Type } from '@nestjs/common';
import { InvalidJobInputError, JobDataFieldError } from '../errors';
import { describeFieldErrors } from '../errors/invalid-job-data.error';
import { requirePeer } from '../instrumentation/require-peer';

/** What the queue reads of class-transformer and class-validator (both optional peers). */
interface ClassTransformer {
  plainToInstance(cls: Type<object>, plain: object): object;
}
interface ValidationErrorLike {
  property: string;
  constraints?: Record<string, string>;
  children?: ValidationErrorLike[];
}
interface ClassValidator {
  validate(object: object, options?: object): Promise<ValidationErrorLike[]>;
}

const TRANSFORMER = 'class-transformer';
const VALIDATOR = 'class-validator';

/**
 * Throws one clear error naming the package to install when either peer is missing; `where`
 * says what needs it (`@JobHandler('report') on Reports#run: dto`). Loads nothing.
 */
export function requireDtoPeers(where: string): void {
  requirePeer(where, TRANSFORMER);
  requirePeer(where, VALIDATOR);
}

/** The data as an instance of `dto`, or the fields that failed its validation (no values). */
export type DtoOutcome = { ok: true; value: object } | { ok: false; fields: JobDataFieldError[] };

/**
 * `data` transformed into an instance of `dto` (class-transformer's `plainToInstance`: a field
 * typed `@Type(() => Date)` becomes a `Date`) and validated (class-validator's `validate`, its
 * defaults). The peers are loaded at the first call, never by apps that use no dto.
 */
export async function toDto(dto: Type<object>, data: unknown, where: string): Promise<DtoOutcome> {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) {
    return { ok: false, fields: [{ field: 'data', constraints: ['isObject'] }] };
  }
  requireDtoPeers(where);
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { plainToInstance } = require(TRANSFORMER) as ClassTransformer;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { validate } = require(VALIDATOR) as ClassValidator;
  const value = plainToInstance(dto, data);
  const errors = await validate(value);
  if (errors.length === 0) return { ok: true, value };
  return { ok: false, fields: fieldErrors(errors, 'data') };
}

/**
 * `enqueue(type, data, { dto })`: refuses data that fails `dto` with `InvalidJobInputError`,
 * whose `field` is the first failing field and whose message names them all, never a value.
 */
export async function checkDtoInput(dto: unknown, data: unknown): Promise<void> {
  if (typeof dto !== 'function') {
    throw new InvalidJobInputError(
      'Invalid job dto: expected a class (class-validator decorated)',
      'dto',
      dto,
    );
  }
  const outcome = await toDto(dto as Type<object>, data, 'enqueue(type, data, { dto })');
  if (outcome.ok) return;
  const [first] = outcome.fields;
  throw new InvalidJobInputError(
    `Job data does not fit ${dto.name}: ${describeFieldErrors(outcome.fields)}`,
    first.field,
    `<fails ${first.constraints.join(', ')}>`,
  );
}

/** class-validator's nested errors, flattened to paths (`data.items[2].sku`) and names. */
function fieldErrors(errors: ValidationErrorLike[], path: string): JobDataFieldError[] {
  return errors.flatMap((error) => {
    const field = /^\d+$/.test(error.property)
      ? `${path}[${error.property}]`
      : `${path}.${error.property}`;
    const own = error.constraints ? [{ field, constraints: Object.keys(error.constraints) }] : [];
    return [...own, ...fieldErrors(error.children ?? [], field)];
  });
}
