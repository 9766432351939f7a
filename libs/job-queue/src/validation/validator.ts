import { PG_INT_MAX } from '../job-queue.constants';

/** How a validator reports a bad value: the error to throw for `field`. */
export type InvalidValueError = (field: string, value: unknown, expected: string) => Error;
/** How a validator reports a key it does not know: the error to throw for `field`. */
export type UnknownKeyError = (field: string, known: readonly string[], value: unknown) => Error;

/** Where `knownKeys` looks, and what it lists. */
export interface KnownKeysOptions {
  /** Put before each key in the error's field (`worker.`, `jobs[3].`). */
  prefix?: string;
  /** Keys let through without being listed (a ConfigurableModuleBuilder extra). */
  ignored?: readonly string[];
  /** The keys the error lists, when they are not all of `known`. */
  listed?: readonly string[];
}

/**
 * The checks every validator of this package is made of, each throwing the error its owner
 * chose (`InvalidJobQueueOptionsError` at boot, `InvalidJobInputError` for a call's arguments),
 * so that a check is written once and a message reads alike wherever a value is refused.
 */
export interface Validator {
  /** Refuses `value` of `field`: `expected` says what would have been accepted. */
  fail(field: string, value: unknown, expected: string): never;
  /** An integer in `[min, max]`; `max` is PostgreSQL's integer maximum unless given. */
  integer(field: string, value: unknown, min: number, max?: number, expected?: string): number;
  /** A number in `[min, max]`, fractions allowed. */
  number(field: string, value: unknown, min: number, max: number): number;
  boolean(field: string, value: unknown): boolean;
  /** A non-empty string of at most `maxLength` UTF-16 units. */
  string(field: string, value: unknown, maxLength: number): string;
  /** An object that is neither null nor an array. */
  plainObject(field: string, value: unknown, expected?: string): Record<string, unknown>;
  /** A non-empty array. */
  nonEmptyArray(field: string, value: unknown, expected?: string): unknown[];
  /** Refuses the first key of `value` that is not in `known`. */
  knownKeys(value: object, known: readonly string[], options?: KnownKeysOptions): void;
}

export function createValidator(
  invalid: InvalidValueError,
  unknownKey: UnknownKeyError,
): Validator {
  const fail = (field: string, value: unknown, expected: string): never => {
    throw invalid(field, value, expected);
  };
  return {
    fail,
    integer(field, value, min, max = PG_INT_MAX, expected = `an integer from ${min} to ${max}`) {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
        fail(field, value, expected);
      }
      return value as number;
    },
    number(field, value, min, max) {
      if (typeof value !== 'number' || !(value >= min && value <= max)) {
        fail(field, value, `a number from ${min} to ${max}`);
      }
      return value as number;
    },
    boolean(field, value) {
      if (typeof value !== 'boolean') fail(field, value, 'true or false');
      return value as boolean;
    },
    string(field, value, maxLength) {
      if (typeof value !== 'string' || value.length === 0 || value.length > maxLength) {
        fail(field, value, `a non-empty string of at most ${maxLength} characters`);
      }
      return value as string;
    },
    plainObject(field, value, expected = 'an object') {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) {
        fail(field, value, expected);
      }
      return value as Record<string, unknown>;
    },
    nonEmptyArray(field, value, expected = 'a non-empty array') {
      if (!Array.isArray(value) || value.length === 0) fail(field, value, expected);
      return value as unknown[];
    },
    knownKeys(value, known, { prefix = '', ignored = [], listed = known } = {}) {
      for (const key of Object.keys(value)) {
        if (!known.includes(key) && !ignored.includes(key)) {
          throw unknownKey(prefix + key, listed, (value as Record<string, unknown>)[key]);
        }
      }
    },
  };
}
