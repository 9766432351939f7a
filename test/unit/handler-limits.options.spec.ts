import { InvalidJobQueueOptionsError } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import { resolveHandlerOptions } from '../../libs/job-queue/src/discovery/job-handler-options';
import { JobHandlerOptions } from '../../libs/job-queue/src/interfaces/job-handler-options.interface';

const WHERE = "@JobHandler('t') on H#m";

const limitsOf = (options: Record<string, unknown>) =>
  resolveHandlerOptions(WHERE, options as JobHandlerOptions, resolveJobQueueOptions(), 't').limits;

function refusal(options: Record<string, unknown>): InvalidJobQueueOptionsError {
  try {
    limitsOf(options);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    return error as InvalidJobQueueOptionsError;
  }
  throw new Error('expected the options to be refused');
}

describe('@JobHandler concurrency limits', () => {
  it('has none unless given: no limit per key or across nodes, not ordered', () => {
    expect(limitsOf({})).toEqual({
      concurrencyPerKey: null,
      globalConcurrency: null,
      ordered: false,
      rateLimit: null,
    });
  });

  it('keeps the limits given, and ordered with concurrencyPerKey 1', () => {
    expect(limitsOf({ concurrencyPerKey: 3, globalConcurrency: 20 })).toEqual({
      concurrencyPerKey: 3,
      globalConcurrency: 20,
      ordered: false,
      rateLimit: null,
    });
    expect(limitsOf({ concurrencyPerKey: 1, ordered: true })).toEqual({
      concurrencyPerKey: 1,
      globalConcurrency: null,
      ordered: true,
      rateLimit: null,
    });
    expect(limitsOf({ globalConcurrency: 1, ordered: false })).toEqual({
      concurrencyPerKey: null,
      globalConcurrency: 1,
      ordered: false,
      rateLimit: null,
    });
  });

  it.each([
    ['concurrencyPerKey', 0],
    ['concurrencyPerKey', -1],
    ['concurrencyPerKey', 1.5],
    ['concurrencyPerKey', '2'],
    ['concurrencyPerKey', null],
    ['concurrencyPerKey', 2 ** 31],
    ['globalConcurrency', 0],
    ['globalConcurrency', -3],
    ['globalConcurrency', 1.5],
    ['globalConcurrency', '2'],
    ['globalConcurrency', Number.NaN],
  ])('refuses %s %p, naming the handler, the option and the value', (option, value) => {
    const error = refusal({ [option]: value });
    expect(error.option).toBe(`${WHERE}: ${option}`);
    expect(error.value).toBe(value);
    expect(error.message).toContain(WHERE);
    expect(error.message).toContain(`: ${option}"`);
    expect(error.message).toContain('an integer from 1 to 2147483647');
  });

  it.each([['true'], [1], [null]])('refuses ordered %p: a boolean or nothing', (value) => {
    const error = refusal({ concurrencyPerKey: 1, ordered: value });
    expect(error.option).toBe(`${WHERE}: ordered`);
    expect(error.value).toBe(value);
    expect(error.message).toContain('true or false');
  });

  it.each([
    ['without concurrencyPerKey', {}, 'concurrencyPerKey is not set'],
    ['with concurrencyPerKey 2', { concurrencyPerKey: 2 }, 'concurrencyPerKey is 2'],
    ['beside globalConcurrency 1 alone', { globalConcurrency: 1 }, 'concurrencyPerKey is not set'],
  ])('refuses ordered: true %s', (_, options, said) => {
    const error = refusal({ ...options, ordered: true });
    expect(error.option).toBe(`${WHERE}: ordered`);
    expect(error.value).toBe(true);
    expect(error.message).toContain(WHERE);
    expect(error.message).toContain('only with concurrencyPerKey: 1');
    expect(error.message).toContain(said);
  });
});

describe('@JobHandler rateLimit', () => {
  it('keeps max and perMs, byKey false unless given', () => {
    expect(limitsOf({ rateLimit: { max: 20, perMs: 1000 } }).rateLimit).toEqual({
      max: 20,
      perMs: 1000,
      byKey: false,
    });
    expect(limitsOf({ rateLimit: { max: 1, perMs: 1, byKey: true } }).rateLimit).toEqual({
      max: 1,
      perMs: 1,
      byKey: true,
    });
  });

  it.each([
    ['max', { max: 0, perMs: 1000 }, 0, 'an integer from 1 to 2147483647'],
    ['max', { max: 1.5, perMs: 1000 }, 1.5, 'an integer from 1 to 2147483647'],
    ['max', { perMs: 1000 }, undefined, 'an integer from 1 to 2147483647'],
    ['max', { max: 2 ** 31, perMs: 1000 }, 2 ** 31, 'an integer from 1 to 2147483647'],
    ['perMs', { max: 5, perMs: -1 }, -1, 'an integer from 1 to 2147483647'],
    ['perMs', { max: 5, perMs: '1000' }, '1000', 'an integer from 1 to 2147483647'],
    ['byKey', { max: 5, perMs: 1000, byKey: 'yes' }, 'yes', 'true or false'],
  ])(
    'refuses rateLimit.%s in %p, naming the handler, the field and the value',
    (field, rateLimit, value, expected) => {
      const error = refusal({ rateLimit });
      expect(error.option).toBe(`${WHERE}: rateLimit.${field}`);
      expect(error.value).toBe(value);
      expect(error.message).toContain(WHERE);
      expect(error.message).toContain(expected);
    },
  );

  it.each([[null], [20], ['20/s'], [[20, 1000]]])('refuses rateLimit %p: an object', (value) => {
    const error = refusal({ rateLimit: value });
    expect(error.option).toBe(`${WHERE}: rateLimit`);
    expect(error.message).toContain('an object { max, perMs, byKey? }');
  });

  it('refuses an unknown key of rateLimit, naming it', () => {
    const error = refusal({ rateLimit: { max: 5, perMs: 1000, perKey: true } });
    expect(error.message).toContain('rateLimit.perKey');
  });
});
