import { integerArrayText } from '../../libs/job-queue/src/sql/integer-array-text';

/**
 * The ids and tokens of an outcome write or a heartbeat go as array text the worker joins; what
 * PostgreSQL makes of it is run by the fencing tests (test/integration/run-writes.fencing).
 */
describe('integerArrayText', () => {
  it('joins job ids and run tokens into the text of a PostgreSQL array', () => {
    expect(integerArrayText(['1', '42', '9007199254740993'])).toBe('{1,42,9007199254740993}');
    expect(integerArrayText([1, 2, 3])).toBe('{1,2,3}');
    expect(integerArrayText(['-7', 0])).toBe('{-7,0}');
    expect(integerArrayText([])).toBe('{}');
  });

  it.each([
    ['a value that is not an integer', ['1', '2,3']],
    ['an empty string', ['1', '']],
    ['a quoted value', ['1', '"2"']],
    ['a fraction', [1, 2.5]],
    ['a number past the safe integers', [1, 2 ** 53]],
    ['NaN', [1, Number.NaN]],
  ])('leaves the array to the driver for %s', (_what, values) => {
    expect(integerArrayText(values)).toBe(values);
  });
});
