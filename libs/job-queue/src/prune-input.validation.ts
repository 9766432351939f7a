import { MAX_RETENTION_MS } from './job-queue.constants';
import { INVALID_INPUT } from './job-queue.messages';
import { InvalidJobInputError } from './errors';
import { checkJobType } from './job-input.validation';
import { PruneOptions } from './interfaces/prune-options.interface';

const PRUNE_OPTION_KEYS = ['olderThanMs', 'statuses', 'types'];
const FINISHED_STATUSES = ['completed', 'failed', 'cancelled'];

export interface CheckedPruneOptions {
  olderThanMs: number | null;
  statuses: string[] | null;
  types: string[] | null;
}

function fail(field: string, value: unknown, expected: string): never {
  throw new InvalidJobInputError(INVALID_INPUT(field, value, expected), field, value);
}

function nonEmptyArray(field: string, value: unknown): unknown[] {
  if (!Array.isArray(value) || value.length === 0) fail(field, value, 'a non-empty array');
  return value;
}

/**
 * Checks `prune()`'s options; each bad one throws an `InvalidJobInputError` naming the field
 * (`statuses[1]`) before any statement is sent. Only finished statuses may be asked for.
 */
export function checkPruneOptions(opts: unknown): CheckedPruneOptions {
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    fail('options', opts, 'an object');
  }
  for (const key of Object.keys(opts)) {
    if (!PRUNE_OPTION_KEYS.includes(key)) {
      throw new InvalidJobInputError(
        `Unknown prune option "${key}". Known options: ${PRUNE_OPTION_KEYS.join(', ')}.`,
        key,
        (opts as Record<string, unknown>)[key],
      );
    }
  }
  const { olderThanMs, statuses, types } = opts as PruneOptions;
  const isAge = (value: unknown) =>
    typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_RETENTION_MS;
  if (olderThanMs !== undefined && !isAge(olderThanMs)) {
    fail('olderThanMs', olderThanMs, `an integer from 0 to ${MAX_RETENTION_MS}`);
  }
  return {
    olderThanMs: olderThanMs ?? null,
    statuses:
      statuses === undefined
        ? null
        : nonEmptyArray('statuses', statuses).map((status, i) => {
            if (typeof status !== 'string' || !FINISHED_STATUSES.includes(status)) {
              fail(`statuses[${i}]`, status, `a finished status: ${FINISHED_STATUSES.join(', ')}`);
            }
            return status;
          }),
    types:
      types === undefined
        ? null
        : nonEmptyArray('types', types).map((type, i) => checkJobType(`types[${i}]`, type)),
  };
}
