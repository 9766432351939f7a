import { Job } from 'nest-pg-job-queue';
import { RunningJob } from '../../libs/job-queue/src/worker/running-job';
import { RunningJobs } from '../../libs/job-queue/src/worker/running-jobs';

const run = (id: string, runToken: number, jobType = 'demo'): RunningJob =>
  new RunningJob(Object.assign(new Job(), { id, jobType, runToken }));

// A job cancelled (or taken back) and retried can be claimed again by the same worker while its
// old run still goes on: both runs are held, each counts, and either can leave first.
describe('RunningJobs', () => {
  it('holds two runs of one job apart, by id and token, each counted', () => {
    const running = new RunningJobs();
    const old = run('7', 1);
    const current = run('7', 2);
    running.add(old);
    running.add(current);

    expect(running.size).toBe(2);
    expect(running.countOf('demo')).toBe(2);
    expect(running.get('7', 1)).toBe(old);
    expect(running.get('7', 2)).toBe(current);
    expect(running.runs()).toEqual([
      { id: '7', token: 1 },
      { id: '7', token: 2 },
    ]);
  });

  it('removing one run of a job leaves the other held and counted', () => {
    const running = new RunningJobs();
    const old = run('7', 1);
    const current = run('7', 2);
    running.add(old);
    running.add(current);

    running.delete(old);
    expect(running.holds(old)).toBe(false);
    expect(running.holds(current)).toBe(true);
    expect(running.size).toBe(1);
    expect(running.countOf('demo')).toBe(1);

    // A second delete of the same run changes nothing.
    running.delete(old);
    expect(running.size).toBe(1);
    expect(running.countOf('demo')).toBe(1);
  });

  it('is idle once the last run leaves, whichever it is', async () => {
    const running = new RunningJobs();
    const old = run('7', 1);
    const current = run('7', 2);
    running.add(old);
    running.add(current);
    const idle = running.waitUntilIdle();
    running.delete(current);
    running.delete(old);
    await expect(idle).resolves.toBe(true);
  });

  it('refuses the same run twice (a token never repeats for a job)', () => {
    const running = new RunningJobs();
    running.add(run('7', 1));
    expect(() => running.add(run('7', 1))).toThrow(/held already/);
  });
});
