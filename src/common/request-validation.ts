import { BadRequestException } from '@nestjs/common';

// Small checks for request bodies and queries. Each names the field it rejects, so a bad
// request gets a 400 that says what to fix, never a 500.

function reject(field: string, expected: string, value: unknown): never {
  throw new BadRequestException({
    statusCode: 400,
    error: 'Bad Request',
    message: `${field} must be ${expected} (got ${JSON.stringify(value) ?? String(value)})`,
    field,
  });
}

export function requireObject(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    reject('body', 'a JSON object', body);
  }
  return body as Record<string, unknown>;
}

/**
 * NUL and unpaired UTF-16 surrogates: text PostgreSQL cannot store. The queue refuses them in job
 * data too, but a query filter (`?type=`) reaches the database directly, and a 400 here names the
 * request's own field.
 */
const UNSTORABLE_TEXT = /[\0\p{Cs}]/u;

export function requireString(field: string, value: unknown, maxLength = 255): string {
  if (typeof value !== 'string' || value.trim() === '' || value.length > maxLength) {
    reject(field, `a non-empty string of at most ${maxLength} characters`, value);
  }
  if (UNSTORABLE_TEXT.test(value)) {
    reject(field, 'text without NUL or unpaired UTF-16 surrogates', value);
  }
  return value;
}

export function requireMatch(
  field: string,
  value: unknown,
  pattern: RegExp,
  expected: string,
): string {
  if (typeof value !== 'string' || !pattern.test(value)) reject(field, expected, value);
  return value;
}

export function optionalString(field: string, value: unknown, maxLength = 255): string | undefined {
  return value === undefined ? undefined : requireString(field, value, maxLength);
}

/** An integer in range, from a JSON number (a string of digits is the wrong type in JSON). */
export function requireInt(
  field: string,
  value: unknown,
  { min, max }: { min: number; max: number },
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    reject(field, `an integer from ${min} to ${max}`, value);
  }
  return value;
}

/** An integer in range from a query string's digits; absent or empty: undefined. */
export function optionalQueryInt(
  field: string,
  value: unknown,
  { min, max }: { min: number; max: number },
): number | undefined {
  if (value === undefined || value === '') return undefined;
  const number = typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    reject(field, `an integer from ${min} to ${max}`, value);
  }
  return number;
}

export function optionalEnum<T extends string>(
  field: string,
  value: unknown,
  allowed: readonly T[],
): T | undefined {
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string' || !allowed.includes(value as T)) {
    reject(field, `one of ${allowed.join(', ')}`, value);
  }
  return value as T;
}
