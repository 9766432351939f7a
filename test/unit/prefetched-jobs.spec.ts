import { Job } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import {
  leaseWindowMs,
  PrefetchedJobs,
  RefusedJobs,
} from '../../libs/job-queue/src/worker/prefetched-jobs';
import { runKey } from '../../libs/job-queue/src/worker/running-job';

const job = (id: string, jobType = 'demo', runToken = 1): Job =>
  Object.assign(new Job(), { id, jobType, runToken, priority: 100 });

// staleAfterMs 3000, heartbeat every 1000: a held job may start until 2000 ms after the claim
// (or the heartbeat) that last renewed it was sent.
const held = () =>
  new PrefetchedJobs(resolveJobQueueOptions({ staleAfterMs: 3_000, heartbeatIntervalMs: 1_000 }));
const refusals = (): RefusedJobs => ({ leaseLapsed: [], paused: [] });

describe('PrefetchedJobs: held jobs start best first', () => {
  const ranked = (id: string, priority: number): Job =>
    Object.assign(new Job(), { id, jobType: 'demo', runToken: 1, priority });
  const order = (jobs: PrefetchedJobs): string[] => {
    const ids: string[] = [];
    for (let job = jobs.next(refusals(), 1); job; job = jobs.next(refusals(), 1)) ids.push(job.id);
    return ids;
  };

  it("puts a later claim's better jobs ahead of the worse ones held, after those as good", () => {
    const jobs = held();
    jobs.holdClaimed([], [ranked('a', 200), ranked('b', 100), ranked('c', 100)], 0);
    jobs.holdClaimed([], [ranked('d', 300), ranked('e', 100), ranked('f', 50)], 0);
    expect(order(jobs)).toEqual(['d', 'a', 'b', 'c', 'e', 'f']);
  });

  it("puts a claim's jobs to start now ahead of everything held, whatever their priority", () => {
    const jobs = held();
    jobs.holdClaimed([], [ranked('a', 200)], 0);
    jobs.holdClaimed([ranked('rate', 1)], [ranked('b', 300)], 0);
    expect(order(jobs)).toEqual(['rate', 'b', 'a']);
    expect(jobs.countOf('demo')).toBe(0);
  });
});

describe('PrefetchedJobs: a held job starts only while its lease is current', () => {
  it('starts a job until staleAfterMs - heartbeatIntervalMs after its claim was sent, not after', () => {
    const jobs = held();
    jobs.push(job('1'), 0);
    jobs.push(job('2'), 0);
    const refused = refusals();
    expect(jobs.next(refused, 1_999)?.id).toBe('1');
    expect(jobs.next(refused, 2_000)).toBeUndefined();
    expect(refused.leaseLapsed.map((j) => j.id)).toEqual(['2']);
    expect(jobs.size).toBe(0);
    expect(jobs.countOf('demo')).toBe(0);
  });

  it('a renewal counts from when the heartbeat was sent, for the runs it renewed only', () => {
    const jobs = held();
    jobs.push(job('1'), 0);
    jobs.push(job('2'), 0);
    jobs.renewed(new Set([runKey('2', 1)]), 1_500);
    const refused = refusals();
    expect(jobs.next(refused, 3_000)?.id).toBe('2');
    expect(refused.leaseLapsed.map((j) => j.id)).toEqual(['1']);
  });

  it('starts no job of a type being paused, and starts them again once the pause is done', () => {
    const jobs = held();
    jobs.push(job('1', 'paused'), 0);
    jobs.push(job('2', 'other'), 0);
    jobs.push(job('3', 'paused'), 0);
    const done = jobs.holdBack('paused');
    const refused = refusals();
    expect(jobs.next(refused, 1)?.id).toBe('2');
    expect(jobs.next(refused, 1)).toBeUndefined();
    expect(refused.paused.map((j) => j.id)).toEqual(['1', '3']);
    done();
    jobs.push(job('4', 'paused'), 0);
    expect(jobs.next(refused, 1)?.id).toBe('4');
  });

  it('drops a type, and tells the types of given runs', () => {
    const jobs = held();
    jobs.push(job('1', 'a'), 0);
    jobs.push(job('2', 'b'), 0);
    expect(jobs.typesOf(new Set([runKey('2', 1), runKey('9', 1)]))).toEqual(new Set(['b']));
    expect(jobs.dropType('a').map((j) => j.id)).toEqual(['1']);
    expect(jobs.countOf('a')).toBe(0);
    expect(jobs.runs()).toEqual([{ id: '2', token: 1 }]);
  });

  it('keeps at least half the lease when the heartbeat interval is more than half of it', () => {
    expect(leaseWindowMs(30_000, 10_000)).toBe(20_000);
    expect(leaseWindowMs(3_600_001, 3_600_000)).toBe(1_800_000.5);
  });
});
