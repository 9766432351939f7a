import {
  FailureBackoff,
  MAX_FAILURE_BACKOFF_MS,
} from '../../libs/job-queue/src/periodic/failure-backoff';

describe('FailureBackoff: how long a failing loop waits before it tries again', () => {
  it('waits nothing while nothing fails', () => {
    const backoff = new FailureBackoff();
    expect({
      failing: backoff.failing,
      failures: backoff.failures,
      delayMs: backoff.delayMs,
    }).toEqual({
      failing: false,
      failures: 0,
      delayMs: 0,
    });
  });

  it('doubles from the base with each failure in a row, up to the cap', () => {
    const backoff = new FailureBackoff(100, 1_000);
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      backoff.failed();
      delays.push(backoff.delayMs);
    }
    expect(delays).toEqual([100, 200, 400, 800, 1_000, 1_000]);
    expect(backoff.failures).toBe(6);
    expect(backoff.failing).toBe(true);
  });

  it('caps at about a second by default, so a worker is back soon after the database is', () => {
    const backoff = new FailureBackoff();
    for (let i = 0; i < 50; i++) backoff.failed();
    expect(backoff.delayMs).toBe(MAX_FAILURE_BACKOFF_MS);
    expect(MAX_FAILURE_BACKOFF_MS).toBeLessThanOrEqual(1_000);
  });

  it('starts over after a success', () => {
    const backoff = new FailureBackoff(100, 1_000);
    for (let i = 0; i < 4; i++) backoff.failed();
    backoff.succeeded();
    expect(backoff.failing).toBe(false);
    expect(backoff.delayMs).toBe(0);
    backoff.failed();
    expect(backoff.delayMs).toBe(100);
  });
});
