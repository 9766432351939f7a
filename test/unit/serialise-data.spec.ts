import { InvalidJobInputError } from 'nest-pg-job-queue';
import { serialiseData } from '../../libs/job-queue/src/validation/json-data';

// serialiseData has a fast path for plain JSON and a checked path for everything else; both must
// give JSON.stringify's text for what they accept, and the checked path names what it refuses.
describe('serialiseData', () => {
  const nullPrototype = Object.assign(Object.create(null) as object, { a: 1 });
  class Point {
    label?: string;
    constructor(
      public x: number,
      public y: number,
    ) {}
    withLabel(label: string): this {
      this.label = label;
      return this;
    }
  }

  it.each([
    ['a plain object', { b: 1, a: [true, 'x"y\\z', null], nested: { ключ: '✓' } }],
    ['a Date inside', { at: new Date('2031-01-02T03:04:05.678Z') }],
    ['an invalid Date', { at: new Date(NaN) }],
    ['undefined values (dropped, as JSON does)', { kept: 1, dropped: undefined }],
    ['an array with a hole and undefined', [1, , undefined, 3]], // eslint-disable-line no-sparse-arrays
    ['a null-prototype object', nullPrototype],
    ['a class instance', new Point(1, 2)],
    ['a toJSON', { toJSON: () => ({ replaced: true }) }],
    ['a string with the six characters \\u0000', 'literal \\u0000'],
    ['a key with the six characters \\ud800', { 'literal \\ud800': '\\\\u0000' }],
    ['well-formed surrogate pairs', { '\u{1F600}': ['\u{1F600}', 'a\u{10FFFF}b'] }],
    ['control characters other than NUL', '\u0001\u001f'],
    ['null', null],
    ['a number', -0],
  ])('serialises %s exactly as JSON.stringify does', (_, value) => {
    expect(serialiseData('data', value, 1_000_000)).toBe(JSON.stringify(value));
  });

  it.each([
    ['a function deep inside', { a: [{ f: () => 1 }] }, 'data.a[0].f'],
    ['NaN', { n: NaN }, 'data.n'],
    ['a NUL character', { s: 'a\u0000b' }, 'data.s'],
    ['a NUL character in a key', { a: [{ 'k\u0000': 1 }] }, 'data.a[0]'],
    ['a lone high surrogate', { s: ['x', 'a\ud800'] }, 'data.s[1]'],
    ['a lone low surrogate in a key', { '\udc00': 1 }, 'data'],
    ['a lone surrogate in a class instance', new Point(1, 2).withLabel('\udbff'), 'data.label'],
    ['NUL from a toJSON', { t: { toJSON: () => '\u0000' } }, 'data.t'],
    ['a BigInt', { big: 1n }, 'data.big'],
    ['a cycle', (() => { const o: Record<string, unknown> = {}; o.self = o; return o; })(), 'data'], // prettier-ignore
    ['undefined at the top', undefined, 'data'],
  ])('refuses %s, naming %s', (_, value, field) => {
    let thrown: unknown;
    try {
      serialiseData('data', value, 1_000_000);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidJobInputError);
    expect((thrown as InvalidJobInputError).field).toBe(field);
  });

  it('shows no payload text in what it refuses', () => {
    const secret = 'unit-secret-3b7';
    for (const value of [
      { s: `${secret}\u0000` },
      { [`${secret}\ud800`]: 1 },
      { big: 10n, secret },
      { fn: () => secret, secret },
      { sym: Symbol(secret) },
    ]) {
      let thrown: InvalidJobInputError | undefined;
      try {
        serialiseData('data', value, 1_000_000);
      } catch (error) {
        thrown = error as InvalidJobInputError;
      }
      expect(thrown).toBeInstanceOf(InvalidJobInputError);
      expect(thrown!.message).not.toContain(secret);
      expect(JSON.stringify(thrown!.value ?? null)).not.toContain(secret);
      expect(String(thrown!.value)).not.toContain(secret);
    }
  });

  it('refuses more bytes than the limit, counting UTF-8 bytes', () => {
    expect(() => serialiseData('data', 'é'.repeat(10), 21)).toThrow(/22 bytes of JSON/);
    expect(serialiseData('data', 'é'.repeat(10), 22)).toBe(JSON.stringify('é'.repeat(10)));
  });
});
