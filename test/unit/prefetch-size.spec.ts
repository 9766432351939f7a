import { PrefetchSize } from '../../libs/job-queue/src/worker/prefetch-size';
import { RunTimes } from '../../libs/job-queue/src/worker/run-times';

describe("PrefetchSize: 'auto' holds what the slots finish in four claim round trips", () => {
  it('holds nothing until a claim and a run have been timed', () => {
    const times = new RunTimes();
    const size = new PrefetchSize('auto', 10, times);
    expect(size.jobs).toBe(0);
    size.claimTook(3);
    expect(size.jobs).toBe(0); // no run timed yet
    times.record('email', 10);
    size.claimTook(3);
    expect(size.jobs).toBe(12); // 4 × 10 slots × 3 ms / 10 ms
  });

  it('holds 4 × concurrency or 500 (the more) for no-op jobs, one for 100 ms jobs, none for slower ones', () => {
    const fast = new RunTimes();
    fast.record('noop', 0.01);
    const few = new PrefetchSize('auto', 10, fast);
    few.claimTook(3);
    expect(few.jobs).toBe(500);
    const many = new PrefetchSize('auto', 200, fast);
    many.claimTook(3);
    expect(many.jobs).toBe(800);

    const slow = new RunTimes();
    slow.record('report', 100);
    const reports = new PrefetchSize('auto', 10, slow);
    reports.claimTook(3);
    expect(reports.jobs).toBe(1);
    slow.record('report', 200);
    slow.record('report', 200);
    reports.claimTook(3);
    expect(reports.jobs).toBe(0); // 4 × 10 × 3 / 200 < 1
  });

  it('follows the claim round trip, smoothed', () => {
    const times = new RunTimes();
    times.record('email', 10);
    const size = new PrefetchSize('auto', 10, times);
    size.claimTook(5);
    expect(size.jobs).toBe(20);
    size.claimTook(10); // 0.8 × 5 + 0.2 × 10 = 6 ms
    expect(size.jobs).toBe(24);
  });

  it('a number is what it holds, whatever the timings', () => {
    const times = new RunTimes();
    times.record('email', 0.01);
    const size = new PrefetchSize(7, 10, times);
    size.claimTook(100);
    expect(size.jobs).toBe(7);
  });
});
