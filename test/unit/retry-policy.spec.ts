import { retryDelayMs } from '../../libs/job-queue/src/retry/retry-policy';

const backoff = { baseDelayMs: 1_000, maxDelayMs: 60_000, jitter: 0.2 };
/** random() returning this gives no spread: 2 * 0.5 - 1 = 0. */
const middle = () => 0.5;

// `random` is injected: every figure below is exact.
describe('retryDelayMs: the delay before the next attempt', () => {
  it('doubles from the base delay with each attempt, capped at the maximum', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((attempt) =>
      retryDelayMs(attempt, backoff, middle),
    );
    expect(delays).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000]);
  });

  it('spreads the delay by at most ±jitter, from the lowest to the highest random()', () => {
    expect(retryDelayMs(3, backoff, () => 0)).toBe(3_200); // 4000 - 20 %
    expect(retryDelayMs(3, backoff, () => 0.25)).toBe(3_600);
    expect(retryDelayMs(3, backoff, () => 0.999_999)).toBe(4_800); // just under +20 %, rounded
    expect(retryDelayMs(7, backoff, () => 0)).toBe(48_000); // the cap is spread too
  });

  it('treats an attempt below 1 as the first, and never goes below zero', () => {
    expect(retryDelayMs(0, backoff, middle)).toBe(1_000);
    expect(retryDelayMs(-3, backoff, middle)).toBe(1_000);
    expect(retryDelayMs(1, { baseDelayMs: 10, maxDelayMs: 10, jitter: 1 }, () => 0)).toBe(0);
  });

  it('gives integers, however odd the base', () => {
    const odd = { baseDelayMs: 333, maxDelayMs: 100_000, jitter: 0.37 };
    for (const r of [0, 0.123, 0.5, 0.77, 0.999]) {
      expect(Number.isInteger(retryDelayMs(4, odd, () => r))).toBe(true);
    }
  });
});
