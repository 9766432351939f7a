import { PG_INT_MAX } from '../job-queue.constants';
import { optionValidator } from '../validation/option.validator';

/**
 * One option, declared once: its README row (default and meaning) and how a given value (or
 * `undefined`) becomes the resolved one. `resolved` holds the options declared before it in its
 * table, for a default that follows another option (`batchSize` from `concurrency`).
 */
export interface OptionSpec<T, R = unknown> {
  /** The "default" column of the README's options table. */
  readonly defaultText: string;
  /** The "meaning" column of the README's options table. */
  readonly doc: string;
  resolve(value: unknown, option: string, resolved: Partial<R>): T;
}

/** An integer option: its default and bounds, checked by the one integer check. */
export interface IntegerOptionSpec extends OptionSpec<number> {
  readonly default: number;
  readonly min: number;
  readonly max: number;
}

export function integerOption(spec: {
  default: number;
  min: number;
  max?: number;
  doc: string;
  /** When the README says more than the number (`10000 (at most …)`). */
  defaultText?: string;
}): IntegerOptionSpec {
  const { default: fallback, min, max = PG_INT_MAX, doc } = spec;
  return {
    default: fallback,
    min,
    max,
    doc,
    defaultText: spec.defaultText ?? String(fallback),
    resolve: (value, option) =>
      value === undefined ? fallback : optionValidator.integer(option, value, min, max),
  };
}

export function booleanOption(spec: { default: boolean; doc: string }): OptionSpec<boolean> {
  return {
    doc: spec.doc,
    defaultText: String(spec.default),
    resolve: (value, option) =>
      value === undefined ? spec.default : optionValidator.boolean(option, value),
  };
}

/**
 * Resolves `raw` against `table`, in the table's order; a key `raw` has that the table does not
 * is refused first (`prefix` goes before it in the error: `worker.`).
 */
export function resolveByTable<R>(
  table: { [K in keyof R]: OptionSpec<R[K], R> },
  raw: Record<string, unknown>,
  prefix: string,
  ignored: readonly string[] = [],
): R {
  optionValidator.knownKeys(raw, Object.keys(table), { prefix, ignored });
  const resolved: Partial<R> = {};
  for (const key of Object.keys(table) as (keyof R & string)[]) {
    resolved[key] = table[key].resolve(raw[key], prefix + key, resolved);
  }
  return resolved as R;
}
