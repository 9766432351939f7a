import { Job } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import { holdLimitMs, MIN_HOLD_MS } from '../../libs/job-queue/src/worker/hoarded-jobs-watch';
import { PrefetchedJobs } from '../../libs/job-queue/src/worker/prefetched-jobs';
import { RunTimes } from '../../libs/job-queue/src/worker/run-times';

const job = (id: string, jobType: string): Job =>
  Object.assign(new Job(), { id, jobType, runToken: 1, priority: 100 });

describe('RunTimes: the median of each type’s recent runs', () => {
  it('is unknown before a run ends, then the middle value (or the mean of the two middle ones)', () => {
    const times = new RunTimes();
    expect(times.median('report')).toBeUndefined();
    times.record('report', 30);
    times.record('report', 10);
    times.record('report', 20);
    expect(times.median('report')).toBe(20);
    times.record('report', 100);
    expect(times.median('report')).toBe(25);
    expect(times.median('other')).toBeUndefined();
  });

  it('follows the latest 31 runs only', () => {
    const times = new RunTimes();
    for (let i = 0; i < 31; i++) times.record('report', 5_000);
    for (let i = 0; i < 16; i++) times.record('report', 10);
    expect(times.median('report')).toBe(10);
  });
});

describe('holdLimitMs: how long a held job waits for a slot', () => {
  it('is a second while the type has no runs, or runs shorter than half a second', () => {
    const times = new RunTimes();
    expect(holdLimitMs(times, 'email')).toBe(MIN_HOLD_MS);
    times.record('email', 400);
    expect(holdLimitMs(times, 'email')).toBe(MIN_HOLD_MS);
  });

  it('is twice the median run time of a slower type', () => {
    const times = new RunTimes();
    times.record('video', 4_000);
    expect(holdLimitMs(times, 'video')).toBe(8_000);
  });
});

describe('PrefetchedJobs: jobs held past their limit are taken out', () => {
  const held = () => new PrefetchedJobs(resolveJobQueueOptions({}));
  const limits = (jobType: string): number => (jobType === 'slow' ? 5_000 : 1_000);

  it('takes out those held at least their limit, and tells when the next one is due', () => {
    const jobs = held();
    jobs.push(job('1', 'fast'), 0);
    jobs.push(job('2', 'slow'), 0);
    jobs.push(job('3', 'fast'), 500);
    expect(jobs.firstOverdueAt(limits)).toBe(1_000);
    expect(jobs.takeOverdue(limits, 999)).toEqual([]);
    expect(jobs.takeOverdue(limits, 1_000).map((j) => j.id)).toEqual(['1']);
    expect(jobs.firstOverdueAt(limits)).toBe(1_500);
    expect(jobs.takeOverdue(limits, 1_600).map((j) => j.id)).toEqual(['3']);
    expect(jobs.size).toBe(1);
    expect(jobs.countOf('fast')).toBe(0);
    expect(jobs.firstOverdueAt(limits)).toBe(5_000);
  });

  it('has no next one when nothing is held', () => {
    expect(held().firstOverdueAt(limits)).toBeUndefined();
  });
});
