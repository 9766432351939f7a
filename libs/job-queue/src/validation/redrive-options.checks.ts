import { RedriveOptions } from '../interfaces/redrive-options.interface';
import { inputValidator } from './input.validator';
import { Validator } from './validator';
import { checkJobId, checkJobType, checkRunAt } from './job-input.checks';

const REDRIVE_OPTION_KEYS = ['type', 'since', 'ids', 'report'] as const;
/** The most ids one `redrive({ ids })` takes. */
export const MAX_REDRIVE_IDS = 1_000;
const redriveInput: Validator = inputValidator('redrive');

export interface CheckedRedriveOptions {
  type: string | null;
  since: Date | null;
  ids: string[] | null;
  report: boolean;
}

/**
 * Checks `redrive()`'s options; each bad one throws an `InvalidJobInputError` naming the field
 * (`ids[2]`) before any statement is sent.
 */
export function checkRedriveOptions(opts: unknown): CheckedRedriveOptions {
  redriveInput.knownKeys(redriveInput.plainObject('options', opts), REDRIVE_OPTION_KEYS);
  const { type, since, ids, report } = opts as RedriveOptions;
  let checkedIds: string[] | null = null;
  if (ids !== undefined) {
    const list = redriveInput.nonEmptyArray('ids', ids);
    if (list.length > MAX_REDRIVE_IDS) {
      redriveInput.fail('ids', `<${list.length} ids>`, `at most ${MAX_REDRIVE_IDS} ids`);
    }
    checkedIds = list.map((id, i) => checkJobId(`ids[${i}]`, id));
  }
  return {
    type: type === undefined ? null : checkJobType('type', type),
    since: since === undefined ? null : checkRunAt('since', since),
    ids: checkedIds,
    report: report === undefined ? false : redriveInput.boolean('report', report),
  };
}
