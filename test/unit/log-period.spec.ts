import {
  FIRST_LOG_PERIOD_MS,
  LogPeriod,
  MAX_LOG_PERIOD_MS,
} from '../../libs/job-queue/src/periodic/log-period';

/** The times, from `from` to `to` ms in steps of `step`, at which a line is due. */
function dueTimes(period: LogPeriod, from: number, to: number, step = 100): number[] {
  const times: number[] = [];
  for (let now = from; now <= to; now += step) if (period.due(now)) times.push(now);
  return times;
}

// The clock is the `now` argument: no timers, no waiting.
describe('LogPeriod: one line per period while a failure lasts', () => {
  it('logs at once, then after periods doubling from the first to the longest', () => {
    const period = new LogPeriod(1_000, 8_000);
    // Gaps 1 s, 2 s, 4 s, then 8 s for as long as it lasts.
    expect(dueTimes(period, 0, 40_000)).toEqual([
      0, 1_000, 3_000, 7_000, 15_000, 23_000, 31_000, 39_000,
    ]);
  });

  it('defaults to 1 s doubling up to 30 s: a handful of lines for a long outage', () => {
    const period = new LogPeriod();
    const times = dueTimes(period, 0, 10 * 60_000);
    expect(times.slice(0, 3)).toEqual([0, FIRST_LOG_PERIOD_MS, 3 * FIRST_LOG_PERIOD_MS]);
    const gaps = times.slice(1).map((time, i) => time - times[i]);
    expect(Math.max(...gaps)).toBe(MAX_LOG_PERIOD_MS);
    // Ten minutes of retries every 100 ms (6,000 of them): 24 lines.
    expect(times).toHaveLength(24);
  });

  it('logs the next failure at once after reset(), with the first period again', () => {
    const period = new LogPeriod(1_000, 8_000);
    dueTimes(period, 0, 20_000);
    period.reset();
    expect(dueTimes(period, 20_100, 24_000)).toEqual([20_100, 21_100, 23_100]);
  });

  it('is not due again within the period however often it is asked', () => {
    const period = new LogPeriod(1_000, 8_000);
    expect(period.due(5_000)).toBe(true);
    expect(dueTimes(period, 5_001, 5_999, 1)).toEqual([]);
    expect(period.due(6_000)).toBe(true);
  });
});
