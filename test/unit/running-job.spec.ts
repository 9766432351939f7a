import { Job, JobCancelledError, JobTimeoutError } from 'nest-pg-job-queue';
import { RunningJob } from '../../libs/job-queue/src/worker/running-job';

// The signal is made lazily (on first read); these pin that it still behaves like one
// AbortController per job, whenever the handler first reads it.
describe('RunningJob', () => {
  const job = Object.assign(new Job(), { id: '7', jobType: 'demo' });

  it('gives a signal read after the abort that is already aborted, with the reason', () => {
    const entry = new RunningJob(job);
    const reason = new JobCancelledError('7');
    entry.abort(reason);
    expect(entry.signal.aborted).toBe(true);
    expect(entry.signal.reason).toBe(reason);
  });

  it('aborts a signal read before the abort, firing its listeners once', () => {
    const entry = new RunningJob(job);
    const signal = entry.signal;
    const heard: unknown[] = [];
    signal.addEventListener('abort', () => heard.push(signal.reason));
    const reason = new JobTimeoutError(50);
    entry.abort(reason);
    entry.abort(new JobCancelledError('7'));
    expect(heard).toEqual([reason]);
    expect(entry.abortReason).toBe(reason);
  });

  it('keeps the first reason and tells the executor hook at once when already aborted', () => {
    const entry = new RunningJob(job);
    expect(entry.aborted).toBe(false);
    const first = new JobTimeoutError(10);
    entry.abort(first);
    entry.abort(new JobCancelledError('7'));
    const told: unknown[] = [];
    entry.onAbort((reason) => told.push(reason));
    expect(told).toEqual([first]);
    expect(entry.signal.reason).toBe(first);
  });
});
