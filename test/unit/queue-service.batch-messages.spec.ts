import { DataSource } from 'typeorm';
import { InvalidJobInputError, QueueService } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';

// enqueueMany refuses a batch over its caps before any statement: the message says which cap,
// by how much, and what to do, in words a user reads (not "Invalid job jobs").
describe('enqueueMany batch refusals', () => {
  const noDatabase = {
    query: () => Promise.reject(new Error('no statement may be sent')),
  } as unknown as DataSource;
  const queue = new QueueService(
    noDatabase,
    resolveJobQueueOptions({ worker: false, maxBatchSize: 2, maxBatchBytes: 20 }),
  );
  const refusal = (jobs: unknown) =>
    queue.enqueueMany(jobs as never).then(
      () => undefined,
      (error: unknown) => error as InvalidJobInputError,
    );

  it('names the argument when jobs is not an array', async () => {
    const error = await refusal({ type: 'a' });
    expect(error).toBeInstanceOf(InvalidJobInputError);
    expect(error).toMatchObject({ field: 'jobs' });
    expect(error?.message).toBe(
      `Invalid enqueueMany argument "jobs": { type: 'a' }. Expected an array of jobs.`,
    );
  });

  it('says how many jobs came and how many one call takes', async () => {
    const error = await refusal([1, 2, 3].map((n) => ({ type: 'a', data: n })));
    expect(error).toMatchObject({ field: 'jobs', value: '<3 jobs>' });
    expect(error?.message).toBe(
      'Too many jobs for one enqueueMany call: 3, at most 2 (maxBatchSize). Split the batch ' +
        'into several calls (one transaction through manager keeps them all or none).',
    );
  });

  it('names the job whose data crosses maxBatchBytes', async () => {
    const error = await refusal([
      { type: 'a', data: 'x'.repeat(10) },
      { type: 'a', data: 'y'.repeat(10) },
    ]);
    expect(error).toMatchObject({ field: 'jobs' });
    expect(error?.message).toBe(
      'Too much data for one enqueueMany call: jobs[1] takes the data JSON past 20 bytes ' +
        '(maxBatchBytes). Split the batch into several calls.',
    );
    expect(error?.message).not.toContain('yyyy');
  });
});
