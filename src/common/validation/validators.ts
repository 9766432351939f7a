import { Transform } from 'class-transformer';
import { ValidateBy, ValidateIf, ValidationArguments, ValidationOptions } from 'class-validator';
import { shown } from './bad-request';

// The example's field checks as class-validator decorators. Each message names the field and
// says what it must be, with the value that was sent, so a 400 tells the client what to fix.

const mustBe = (expected: string) => (args: ValidationArguments) =>
  `${args.property} must be ${expected} (got ${shown(args.value)})`;

/**
 * NUL and unpaired UTF-16 surrogates: text PostgreSQL cannot store. The queue refuses them in job
 * data too, but a query filter (`?type=`) reaches the database directly, and a 400 here names the
 * request's own field.
 */
const UNSTORABLE_TEXT = /[\0\p{Cs}]/u;

/** A non-blank string of at most `maxLength` characters that PostgreSQL can store. */
export function IsText(maxLength = 255, options?: ValidationOptions): PropertyDecorator {
  const isString = (value: unknown): value is string =>
    typeof value === 'string' && value.trim() !== '' && value.length <= maxLength;
  return ValidateBy(
    {
      name: 'isText',
      validator: {
        validate: (value) => isString(value) && !UNSTORABLE_TEXT.test(value),
        defaultMessage: (args) =>
          isString(args?.value)
            ? mustBe('text without NUL or unpaired UTF-16 surrogates')(args!)
            : mustBe(`a non-empty string of at most ${maxLength} characters`)(args!),
      },
    },
    options,
  );
}

/** An integer from `min` to `max`, given as a JSON number (a string of digits is the wrong type). */
export function IsIntIn(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isIntIn',
      validator: {
        validate: (value) =>
          typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max,
        defaultMessage: mustBe(`an integer from ${min} to ${max}`),
      },
    },
    options,
  );
}

/** One of `allowed`, exactly (case counts). */
export function IsOneOf(
  allowed: readonly string[],
  options?: ValidationOptions,
): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isOneOf',
      validator: {
        validate: (value) => typeof value === 'string' && allowed.includes(value),
        defaultMessage: mustBe(`one of ${allowed.join(', ')}`),
      },
    },
    options,
  );
}

/** A string matching `pattern`; `expected` says what in words. */
export function IsLike(pattern: RegExp, expected: string, options?: ValidationOptions) {
  return ValidateBy(
    {
      name: 'isLike',
      validator: {
        validate: (value) => typeof value === 'string' && pattern.test(value),
        defaultMessage: mustBe(expected),
      },
    },
    options,
  );
}

/** A parameter the route no longer takes: refused with what to send instead (`by …: …`). */
export function IsRefused(instead: string, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'isRefused',
      validator: {
        validate: (value) => value === undefined,
        defaultMessage: (args) => `${args!.property} is no longer accepted ${instead}`,
      },
    },
    options,
  );
}

/**
 * A query string's integer: its digits become a number; anything else (words, `1.5`, a repeated
 * parameter's array) stays as sent, for IsIntIn to refuse. Empty is absent.
 */
export const QueryInt = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => {
    if (value === '') return undefined;
    return typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value;
  });

/** An empty query parameter (`?status=`) counts as absent. */
export const EmptyIsAbsent = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (value === '' ? undefined : value));

/** Validated only when sent: absent is fine, anything sent (null too) must pass. */
export const IfSent = (): PropertyDecorator =>
  ValidateIf((_object: object, value: unknown) => value !== undefined);
