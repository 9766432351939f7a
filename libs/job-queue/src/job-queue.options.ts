import { JobQueueModuleOptions } from './interfaces/job-queue-options.interface';
import { MODULE_OPTIONS } from './options/module-options.table';
import { resolveByTable } from './options/option-spec';
import { ResolvedJobQueueOptions } from './options/resolved-options';
import { optionValidator } from './validation/option.validator';

// Named only to keep `isGlobal` (a ConfigurableModuleBuilder extra) from reading as unknown.
const EXTRA_KEYS = ['isGlobal'];

/**
 * The one place options get their defaults and are validated, whichever way the module was
 * registered (`forRoot`, `useFactory`, `useClass`, `useExisting`): each option as its entry in
 * `MODULE_OPTIONS` declares it.
 */
export function resolveJobQueueOptions(raw: JobQueueModuleOptions = {}): ResolvedJobQueueOptions {
  const given = optionValidator.plainObject('options', raw);
  return resolveByTable(MODULE_OPTIONS, given, '', EXTRA_KEYS);
}
