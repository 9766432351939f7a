/** A decimal integer as PostgreSQL reads it, and so as an element of an array literal. */
const INTEGER_TEXT = /^-?\d+$/;

/**
 * `values` as the text of a PostgreSQL array (`{1,2,3}`) when each is an integer, for a
 * parameter cast to `bigint[]` or `integer[]`; any other value leaves the array as given. The pg
 * driver quotes and escapes every element of a JavaScript array, and an outcome write sends
 * two such arrays of hundreds of job ids and tokens: one join costs the worker a fraction of
 * that (see bench/README.md, "Shaped by measurement").
 */
export function integerArrayText(
  values: ReadonlyArray<string | number>,
): string | ReadonlyArray<string | number> {
  for (const value of values) {
    if (typeof value === 'number' ? !Number.isSafeInteger(value) : !INTEGER_TEXT.test(value)) {
      return values;
    }
  }
  return `{${values.join(',')}}`;
}
