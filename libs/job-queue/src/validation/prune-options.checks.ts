import { MAX_RETENTION_MS } from '../job-queue.constants';
import { PruneOptions } from '../interfaces/prune-options.interface';
import { inputValidator } from './input.validator';
import { Validator } from './validator';
import { checkJobType } from './job-input.checks';
import { FINISHED_JOB_STATUSES, isFinishedStatus } from '../entities/job-status.enum';

const PRUNE_OPTION_KEYS = ['olderThanMs', 'statuses', 'types', 'report'];
const pruneInput: Validator = inputValidator('prune');

export interface CheckedPruneOptions {
  olderThanMs: number | null;
  statuses: string[] | null;
  types: string[] | null;
  report: boolean;
}

/**
 * Checks `prune()`'s options; each bad one throws an `InvalidJobInputError` naming the field
 * (`statuses[1]`) before any statement is sent. Only finished statuses may be asked for.
 */
export function checkPruneOptions(opts: unknown): CheckedPruneOptions {
  pruneInput.knownKeys(pruneInput.plainObject('options', opts), PRUNE_OPTION_KEYS);
  const { olderThanMs, statuses, types, report } = opts as PruneOptions;
  return {
    olderThanMs:
      olderThanMs === undefined
        ? null
        : pruneInput.integer('olderThanMs', olderThanMs, 0, MAX_RETENTION_MS),
    statuses:
      statuses === undefined
        ? null
        : pruneInput.nonEmptyArray('statuses', statuses).map((status, i) => {
            if (typeof status !== 'string' || !isFinishedStatus(status)) {
              pruneInput.fail(
                `statuses[${i}]`,
                status,
                `a finished status: ${FINISHED_JOB_STATUSES.join(', ')}`,
              );
            }
            return status;
          }),
    types:
      types === undefined
        ? null
        : pruneInput
            .nonEmptyArray('types', types)
            .map((type, i) => checkJobType(`types[${i}]`, type)),
    report: report === undefined ? false : pruneInput.boolean('report', report),
  };
}
