import { JobContextHooks } from '../interfaces/job-context-hooks.interface';
import { optionValidator as check } from '../validation/option.validator';

const HOOKS = ['capture', 'restore'] as const;

/** The `context` option: absent, or an object whose `capture` and `restore` are functions. */
export function resolveContextHooks(option: string, value: unknown): JobContextHooks | undefined {
  if (value === undefined) return undefined;
  const hooks = check.plainObject(option, value, 'an object with capture() and/or restore()');
  check.knownKeys(hooks, HOOKS, { prefix: `${option}.` });
  for (const hook of HOOKS) {
    if (hooks[hook] !== undefined && typeof hooks[hook] !== 'function') {
      check.fail(`${option}.${hook}`, hooks[hook], 'a function');
    }
  }
  return hooks as JobContextHooks;
}
