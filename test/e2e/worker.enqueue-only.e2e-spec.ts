import { SchedulerRegistry } from '@nestjs/schedule';
import { JobStatus } from 'nest-pg-job-queue';
import { JOB_QUEUE_SCHEDULER } from '../../libs/job-queue/src/job-queue.constants';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';
import { RECORD_JOB, RecordingHandlers, WITNESS_JOB } from '../fixtures/recording.handlers';

describe('worker: false (an enqueue-only app)', () => {
  let enqueueOnly: WorkerApp;
  let witness: WorkerApp;

  const file = useWorkerTestFile();

  beforeAll(async () => {
    // It has a @JobHandler for the type, and still must not run it.
    enqueueOnly = await file.start({
      queueOptions: { worker: false },
      providers: [RecordingHandlers],
    });
    // A real worker for another type only, to show time passes and notifications flow.
    witness = await file.start({
      queueOptions: { worker: { pollIntervalMs: 20, jobTypes: [WITNESS_JOB] } },
      providers: [RecordingHandlers],
    });
  });

  it('never claims a job, while a worker next to it runs its own', async () => {
    expect(enqueueOnly.app.get<SchedulerRegistry>(JOB_QUEUE_SCHEDULER).getIntervals()).toEqual([]);
    const job = await enqueueOnly.queue.enqueue(RECORD_JOB, {});

    // Several rounds of the witness worker: polls and notifications have come and gone.
    for (let i = 0; i < 5; i++) {
      const seen = await enqueueOnly.queue.enqueue(WITNESS_JOB, { i });
      await waitFor(
        async () => (await enqueueOnly.queue.getJob(seen.id)).status === JobStatus.Completed,
        { description: `witness job ${seen.id} to complete` },
      );
    }

    const after = await enqueueOnly.queue.getJob(job.id);
    expect(after).toMatchObject({ status: JobStatus.Pending, attempts: 0, workerId: null });
    expect(enqueueOnly.app.get(RecordingHandlers).ran).toEqual([]);
    expect(witness.app.get(RecordingHandlers).ran.map((r) => r.type)).toEqual(
      Array(5).fill(WITNESS_JOB),
    );
  });
});
