import { Client } from 'pg';
import { JobStatus } from 'nest-pg-job-queue';
import { DEFAULT_SCHEMA } from '../../libs/job-queue/src/job-queue.constants';
import { claimAndStartJobs, ClaimTypes } from '../../libs/job-queue/src/sql/claim-job-batch.query';
import { finishJobs } from '../../libs/job-queue/src/sql/finish-jobs.query';
import { parseJobEventNotification } from '../../libs/job-queue/src/events/job-event-payload';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

const JOBS = 400;
// The longest text the columns take, with characters JSON escapes to 6 bytes (`\u0001`) or
// UTF-8 writes in 2: the chunks must stay under 8,000 bytes however long their items are.
const TYPE = 'é'.repeat(254) + 't';
const STAGE = '\u0001'.repeat(255);
const LONG: ClaimTypes = {
  jobTypes: [TYPE],
  caps: [null],
  maxAttempts: [3],
  backoffBaseMs: [0],
  backoffMaxMs: [0],
  backoffJitter: [0],
};

/**
 * The statements of job transitions NOTIFY their whole batch, chunked under PostgreSQL's 8,000
 * bytes per payload: every job's event once, from the statement that made it, and nothing for an
 * outcome that changed nothing.
 */
describe('job event notifications', () => {
  const app = useQueueTestingModule({ queueOptions: { worker: false, events: { remote: true } } });
  let listener: Client;
  const payloads: string[] = [];

  beforeAll(async () => {
    listener = new Client({ connectionString: app.db.url });
    // The file's database may be dropped (its sessions ended) before this afterAll runs.
    listener.on('error', () => undefined);
    await listener.connect();
    listener.on('notification', (message) => {
      if (message.channel === `${DEFAULT_SCHEMA}_job_events`) payloads.push(message.payload!);
    });
    await listener.query(`LISTEN ${DEFAULT_SCHEMA}_job_events`);
  });

  afterAll(() => listener?.end().catch(() => undefined));

  const eventsHeard = () => payloads.flatMap((p) => parseJobEventNotification(p)!.events);

  it('sends a claim of 400 long-named jobs as several payloads, each under 8,000 bytes', async () => {
    await app.queue.enqueueMany(
      Array.from({ length: JOBS }, (_, n) => ({ type: TYPE, data: { n } })),
    );
    const { jobs } = await claimAndStartJobs(
      app.dataSource,
      DEFAULT_SCHEMA,
      'worker-a',
      LONG,
      JOBS,
      undefined,
      true,
    );
    expect(jobs).toHaveLength(JOBS);
    await waitFor(() => eventsHeard().length >= JOBS, { description: 'every started event' });
    const started = eventsHeard();
    expect(started).toHaveLength(JOBS);
    expect(new Set(started.map((e) => e.id))).toEqual(new Set(jobs.map((j) => j.id)));
    expect(
      started.every((e) => e.event === 'started' && e.status === 'running' && e.type === TYPE),
    ).toBe(true);
    expect(payloads.length).toBeGreaterThan(1);
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
    expect(parseJobEventNotification(payloads[0])!.origin).toBe('worker-a');

    // The outcomes: completed, and with a stage still to write; one of them superseded.
    payloads.splice(0);
    const outcomes = jobs.map((job, n) => ({
      id: job.id,
      runToken: n === 0 ? job.runToken + 1 : job.runToken,
      status: JobStatus.Completed as const,
      resultJson: '{}',
      lastError: null,
      retryDelayMs: null,
      progress: n % 2 === 0 ? 100 : null,
      stage: n % 2 === 0 ? STAGE : null,
      logRows: [],
      logOutcome: false,
    }));
    const superseded = await finishJobs(app.dataSource, DEFAULT_SCHEMA, 'worker-a', outcomes, true);
    expect(superseded.map((o) => o.id)).toEqual([jobs[0].id]);
    await waitFor(() => eventsHeard().length >= JOBS - 1, { description: 'every completed event' });
    const completed = eventsHeard();
    expect(completed).toHaveLength(JOBS - 1);
    expect(completed.map((e) => e.id)).not.toContain(jobs[0].id);
    expect(completed.every((e) => e.event === 'completed' && e.status === 'completed')).toBe(true);
    expect(completed.find((e) => e.id === jobs[2].id)).toMatchObject({
      progress: 100,
      stage: STAGE,
    });
    for (const payload of payloads) expect(Buffer.byteLength(payload)).toBeLessThan(8_000);
  });

  it('sends nothing for a claim or an outcome write that changed nothing', async () => {
    payloads.splice(0);
    const { jobs } = await claimAndStartJobs(
      app.dataSource,
      DEFAULT_SCHEMA,
      'w',
      LONG,
      10,
      undefined,
      true,
    );
    expect(jobs).toEqual([]);
    expect(await finishJobs(app.dataSource, DEFAULT_SCHEMA, 'w', [], true)).toEqual([]);
    // A statement that does notify, after them: once its payload is here, theirs would be too.
    const [job] = await app.queue.enqueueMany([{ type: TYPE, data: {} }]);
    await app.queue.cancel(job.id);
    await waitFor(() => payloads.length > 0, { description: 'the cancel notification' });
    expect(eventsHeard()).toEqual([
      expect.objectContaining({ event: 'cancelled', id: job.id, status: 'cancelled' }),
    ]);
  });
});
