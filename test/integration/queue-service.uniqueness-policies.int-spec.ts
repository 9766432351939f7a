import { EntityManager } from 'typeorm';
import { InvalidJobInputError, Job, JobStateConflictError, JobStatus } from 'nest-pg-job-queue';
import { useQueueTestingModule } from '../support/test-app';
import { waitFor } from '../support/wait-for';

describe('QueueService: uniqueStates, uniqueForMs, debounceMs, throttleMs and outcomes', () => {
  const app = useQueueTestingModule({
    queueOptions: { retention: { completedMs: 60_000, failedMs: 120_000, cancelledMs: false } },
  });

  const setStatus = (id: string, status: JobStatus, manager?: EntityManager): Promise<unknown> =>
    (manager ?? app.dataSource).query(`UPDATE job_queue.jobs SET status = $2 WHERE id = $1`, [
      id,
      status,
    ]);

  const storedKey = async (id: string): Promise<string> =>
    (await app.dataSource.query(`SELECT unique_key FROM job_queue.jobs WHERE id = $1`, [id]))[0]
      .unique_key;

  const countRows = async (): Promise<number> =>
    Number((await app.dataSource.query(`SELECT count(*) AS n FROM job_queue.jobs`))[0].n);

  /** Waits until the database's clock has left the window folded into job `id`'s stored key. */
  const waitForWindowEnd = async (id: string): Promise<void> => {
    const [, window] = (await storedKey(id)).split('\u001f');
    const [start, length] = window.split('/');
    const end = new Date(Date.parse(start) + Number(length));
    await waitFor(
      async () =>
        (await app.dataSource.query(`SELECT now() >= $1::timestamptz AS past`, [end]))[0].past,
      { description: `the database's clock to pass ${end.toISOString()}` },
    );
  };

  describe('uniqueStates and uniqueForMs', () => {
    it('with completed among the states, a finished job holds its key for the rest of its window, then not', async () => {
      const opts = {
        uniqueKey: 'digest:42',
        uniqueStates: [...unfinished(), JobStatus.Completed],
        uniqueForMs: 2_000,
      };
      // One transaction: one now(), so both enqueues fall in one window whatever the timing.
      const [first, second] = await app.dataSource.transaction(async (manager) => {
        const created = await app.queue.enqueueWithOutcome(
          'digest',
          { n: 1 },
          { ...opts, manager },
        );
        await setStatus(created.job.id, JobStatus.Completed, manager);
        const again = await app.queue.enqueueWithOutcome('digest', { n: 2 }, { ...opts, manager });
        return [created, again];
      });

      expect(first.outcome).toBe('created');
      expect(second).toMatchObject({ outcome: 'skipped', job: { id: first.job.id } });
      expect(second.job.status).toBe(JobStatus.Completed);

      await waitForWindowEnd(first.job.id);
      const later = await app.queue.enqueueWithOutcome('digest', { n: 3 }, opts);
      expect(later.outcome).toBe('created');
      expect(later.job.id).not.toBe(first.job.id);
    });

    it('a failed job is not retried while a completed job that counts holds its key', async () => {
      const opts = {
        uniqueKey: 'digest:retry',
        uniqueStates: [...unfinished(), JobStatus.Completed],
      };
      const failed = await app.queue.enqueue('digest', {}, opts);
      await setStatus(failed.id, JobStatus.Failed);
      const done = await app.queue.enqueue('digest', {}, opts);
      await setStatus(done.id, JobStatus.Completed);

      // The refusal names the real reason: the key, and the job holding it.
      const refusal = await app.queue.retry(failed.id).catch((error: unknown) => error);
      expect(refusal).toBeInstanceOf(JobStateConflictError);
      expect(refusal).toMatchObject({
        jobId: failed.id,
        status: JobStatus.Failed,
        keyHolder: { uniqueKey: 'digest:retry', jobId: done.id, status: JobStatus.Completed },
      });
      expect((refusal as Error).message).toBe(
        `Job ${failed.id} cannot be retried: its unique key 'digest:retry' is held by job ` +
          `${done.id} (completed). Cancel or remove that job first, or enqueue again with another key.`,
      );
      expect(await app.queue.getJob(failed.id)).toMatchObject({ status: JobStatus.Failed });
      // redrive leaves it failed too, and its report says why.
      expect(await app.queue.redrive({ ids: [failed.id], report: true })).toEqual({
        moved: 0,
        skipped: { uniqueKey: 1, locked: 0 },
      });
      expect(await app.queue.enqueueWithOutcome('digest', {}, opts)).toMatchObject({
        outcome: 'skipped',
        job: { id: done.id },
      });
    });

    it('with the default states, a finished job of the same window does not hold the key', async () => {
      const opts = { uniqueKey: 'digest:default', uniqueForMs: 3_600_000 };
      const [first, second] = await app.dataSource.transaction(async (manager) => {
        const created = await app.queue.enqueueWithOutcome('digest', {}, { ...opts, manager });
        const duplicate = await app.queue.enqueueWithOutcome('digest', {}, { ...opts, manager });
        await setStatus(created.job.id, JobStatus.Completed, manager);
        const after = await app.queue.enqueueWithOutcome('digest', {}, { ...opts, manager });
        return [duplicate, after];
      });

      expect(first.outcome).toBe('skipped');
      expect(second.outcome).toBe('created');
      expect(second.job.id).not.toBe(first.job.id);
    });

    it('folds the window into the stored key; the job shows the key it was given', async () => {
      const { job } = await app.queue.enqueueWithOutcome(
        'digest',
        {},
        { uniqueKey: 'digest:fold', uniqueForMs: 3_600_000 },
      );

      expect(job.uniqueKey).toBe('digest:fold');
      expect((await app.queue.getJob(job.id)).uniqueKey).toBe('digest:fold');
      const [key, window] = (await storedKey(job.id)).split('\u001f');
      expect(key).toBe('digest:fold');
      expect(window).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z\/3600000$/);
    });

    it('a key without a window and the same key with one are different keys', async () => {
      const plain = await app.queue.enqueueWithOutcome('digest', {}, { uniqueKey: 'digest:both' });
      const windowed = await app.queue.enqueueWithOutcome(
        'digest',
        {},
        { uniqueKey: 'digest:both', uniqueForMs: 60_000 },
      );

      expect([plain.outcome, windowed.outcome]).toEqual(['created', 'created']);
    });
  });

  describe('throttleMs', () => {
    it.each([JobStatus.Completed, JobStatus.Failed, JobStatus.Cancelled])(
      'the first job of the window stays, %s or not, and later ones are skipped; the next window takes one',
      async (status) => {
        const opts = { uniqueKey: `sync:${status}`, throttleMs: 1_000 };
        const outcomes = await app.dataSource.transaction(async (manager) => {
          const first = await app.queue.enqueueWithOutcome('sync', { n: 1 }, { ...opts, manager });
          const second = await app.queue.enqueueWithOutcome('sync', { n: 2 }, { ...opts, manager });
          await setStatus(first.job.id, status, manager);
          const third = await app.queue.enqueueWithOutcome('sync', { n: 3 }, { ...opts, manager });
          return [first, second, third];
        });

        expect(outcomes.map((result) => result.outcome)).toEqual(['created', 'skipped', 'skipped']);
        expect(new Set(outcomes.map((result) => result.job.id)).size).toBe(1);
        expect(outcomes[2].job).toMatchObject({ status, data: { n: 1 } });

        await waitForWindowEnd(outcomes[0].job.id);
        expect((await app.queue.enqueueWithOutcome('sync', {}, opts)).outcome).toBe('created');
      },
    );
  });

  describe('debounceMs', () => {
    it('replaces the data of a holder not started and moves its run_at; its other options stay', async () => {
      const first = await app.queue.enqueueWithOutcome(
        'search_index',
        { rev: 1 },
        { uniqueKey: 'doc:7', debounceMs: 60_000, priority: 5, maxAttempts: 2 },
      );
      const second = await app.queue.enqueueWithOutcome(
        'search_index',
        { rev: 2 },
        { uniqueKey: 'doc:7', debounceMs: 120_000, priority: 9 },
      );

      expect(first.outcome).toBe('created');
      expect(first.job).toMatchObject({ status: JobStatus.Scheduled, data: { rev: 1 } });
      expect(second.outcome).toBe('replaced');
      expect(second.job).toMatchObject({
        id: first.job.id,
        status: JobStatus.Scheduled,
        data: { rev: 2 },
        priority: 5,
        maxAttempts: 2,
        uniqueKey: 'doc:7',
      });
      expect(second.job.runAt.getTime()).toBeGreaterThanOrEqual(first.job.runAt.getTime() + 60_000);
      expect(await app.queue.getJob(first.job.id)).toMatchObject({ data: { rev: 2 } });
    });

    it.each([JobStatus.Pending, JobStatus.Waiting])(
      'replaces a %s holder: a pending one waits again, a waiting one stays set aside',
      async (status) => {
        const key = `doc:${status}`;
        const first = await app.queue.enqueue('search_index', { rev: 1 }, { uniqueKey: key });
        await setStatus(first.id, status);

        const second = await app.queue.enqueueWithOutcome(
          'search_index',
          { rev: 2 },
          { uniqueKey: key, debounceMs: 30_000 },
        );

        expect(second.outcome).toBe('replaced');
        expect(second.job).toMatchObject({
          id: first.id,
          data: { rev: 2 },
          status: status === JobStatus.Pending ? JobStatus.Scheduled : JobStatus.Waiting,
        });
      },
    );

    it('debounceMs 0 replaces the data and makes the job due now', async () => {
      await app.queue.enqueue('search_index', { rev: 1 }, { uniqueKey: 'doc:0', delayMs: 60_000 });
      const result = await app.queue.enqueueWithOutcome(
        'search_index',
        { rev: 2 },
        { uniqueKey: 'doc:0', debounceMs: 0 },
      );

      expect(result).toMatchObject({ outcome: 'replaced', job: { status: JobStatus.Pending } });
    });

    it.each([JobStatus.Claimed, JobStatus.Running])(
      'a %s holder is left as it was: the call creates its successor, blocked until the holder finishes',
      async (status) => {
        const key = `doc:started-${status}`;
        const first = await app.queue.enqueue('search_index', { rev: 1 }, { uniqueKey: key });
        await setStatus(first.id, status);

        const second = await app.queue.enqueueWithOutcome(
          'search_index',
          { rev: 2 },
          { uniqueKey: key, debounceMs: 1_000 },
        );

        expect(second.outcome).toBe('created');
        expect(second.job).toMatchObject({
          status: JobStatus.Blocked,
          data: { rev: 2 },
          uniqueKey: key,
          unfinishedDependencies: 1,
        });
        expect(second.job.id).not.toBe(first.id);
        expect(await app.queue.getJob(first.id)).toMatchObject({ data: { rev: 1 }, status });
      },
    );

    it('a holder of another type is not replaced (keys are global, data is per type)', async () => {
      const first = await app.queue.enqueue('other_type', { rev: 1 }, { uniqueKey: 'doc:typed' });
      const second = await app.queue.enqueueWithOutcome(
        'search_index',
        { rev: 2 },
        { uniqueKey: 'doc:typed', debounceMs: 1_000 },
      );

      expect(second).toMatchObject({ outcome: 'skipped', job: { id: first.id } });
      expect((await app.queue.getJob(first.id)).data).toEqual({ rev: 1 });
    });

    it('with no holder, creates the job due debounceMs from now', async () => {
      const before = Date.now();
      const { job, outcome } = await app.queue.enqueueWithOutcome(
        'search_index',
        {},
        { uniqueKey: 'doc:new', debounceMs: 45_000 },
      );

      expect(outcome).toBe('created');
      expect(job.status).toBe(JobStatus.Scheduled);
      // The database's clock sets run_at; allow this machine's clock a second of difference.
      expect(job.runAt.getTime()).toBeGreaterThan(before + 44_000);
    });

    it('20 concurrent calls make one job, one created and 19 replaced, holding one of their data', async () => {
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          app.queue.enqueueWithOutcome(
            'search_index',
            { caller: i },
            { uniqueKey: 'doc:burst', debounceMs: 60_000 },
          ),
        ),
      );

      expect(results.filter((r) => r.outcome === 'created')).toHaveLength(1);
      expect(results.filter((r) => r.outcome === 'replaced')).toHaveLength(19);
      expect(new Set(results.map((r) => r.job.id)).size).toBe(1);
      const stored = await app.queue.getJob(results[0].job.id);
      // Each replace returns the row it wrote: the stored data is one caller's, whole.
      expect(results.map((r) => r.job.data)).toContainEqual(stored.data);
      const created = results.find((r) => r.outcome === 'created') as (typeof results)[number];
      expect(stored.runAt.getTime()).toBeGreaterThanOrEqual(created.job.runAt.getTime());
      expect(
        await app.dataSource.query(
          `SELECT count(*)::int AS n FROM job_queue.jobs WHERE unique_key = 'doc:burst'`,
        ),
      ).toEqual([{ n: 1 }]);
    });
  });

  describe('enqueueManyWithOutcome', () => {
    it('says what became of each item, in order, as one enqueue after another would', async () => {
      const results = await app.queue.enqueueManyWithOutcome([
        { type: 'batch', data: { n: 0 }, uniqueKey: 'batch:a' },
        { type: 'batch', data: { n: 1 }, uniqueKey: 'batch:a' },
        { type: 'batch', data: { n: 2 } },
        { type: 'batch', data: { n: 3 }, uniqueKey: 'batch:b', debounceMs: 60_000 },
        { type: 'batch', data: { n: 4 }, uniqueKey: 'batch:b', debounceMs: 60_000 },
        { type: 'batch', data: { n: 5 }, uniqueKey: 'batch:b', debounceMs: 60_000 },
      ]);

      expect(results.map((r) => r.outcome)).toEqual([
        'created',
        'skipped',
        'created',
        'created',
        'replaced',
        'replaced',
      ]);
      expect(results[1].job.id).toBe(results[0].job.id);
      expect(new Set(results.slice(3).map((r) => r.job.id)).size).toBe(1);
      // The debounced key holds the last item's data.
      expect((await app.queue.getJob(results[3].job.id)).data).toEqual({ n: 5 });

      const again = await app.queue.enqueueManyWithOutcome([
        { type: 'batch', data: { n: 6 }, uniqueKey: 'batch:b', debounceMs: 60_000 },
        { type: 'batch', data: { n: 7 }, uniqueKey: 'batch:a' },
      ]);
      expect(again.map((r) => r.outcome)).toEqual(['replaced', 'skipped']);
      expect(again[0].job.data).toEqual({ n: 6 });
    });

    it('enqueue and enqueueMany keep returning jobs', async () => {
      const job: Job = await app.queue.enqueue('batch', {}, { uniqueKey: 'batch:plain' });
      const [same] = await app.queue.enqueueMany([
        { type: 'batch', data: {}, uniqueKey: 'batch:plain' },
      ]);
      expect(same.id).toBe(job.id);
    });
  });

  describe('bad combinations fail at enqueue, naming the field, and write nothing', () => {
    const refusals: Array<[string, Record<string, unknown>, string]> = [
      ['debounceMs without uniqueKey', { debounceMs: 100 }, 'debounceMs'],
      ['throttleMs without uniqueKey', { throttleMs: 100 }, 'throttleMs'],
      ['uniqueForMs without uniqueKey', { uniqueForMs: 100 }, 'uniqueForMs'],
      [
        'uniqueStates without uniqueKey',
        { uniqueStates: [...unfinished(), 'completed'] },
        'uniqueStates',
      ],
      [
        'both debounce and throttle',
        { uniqueKey: 'k', debounceMs: 1, throttleMs: 1 },
        'throttleMs',
      ],
      ['a negative debounce', { uniqueKey: 'k', debounceMs: -1 }, 'debounceMs'],
      ['a zero throttle', { uniqueKey: 'k', throttleMs: 0 }, 'throttleMs'],
      ['a negative period', { uniqueKey: 'k', uniqueForMs: -5 }, 'uniqueForMs'],
      ['a fractional period', { uniqueKey: 'k', uniqueForMs: 1.5 }, 'uniqueForMs'],
      [
        'an unknown state',
        { uniqueKey: 'k', uniqueStates: [...unfinished(), 'done'] },
        'uniqueStates[5]',
      ],
      [
        'states without every unfinished one',
        { uniqueKey: 'k', uniqueStates: ['pending', 'completed'] },
        'uniqueStates',
      ],
      [
        'states that are not an array',
        { uniqueKey: 'k', uniqueStates: 'completed' },
        'uniqueStates',
      ],
      [
        'a period longer than the retention of completed jobs',
        { uniqueKey: 'k', uniqueStates: [...unfinished(), 'completed'], uniqueForMs: 60_001 },
        'uniqueForMs',
      ],
      [
        'a throttle longer than the retention of failed jobs',
        { uniqueKey: 'k', throttleMs: 120_001 },
        'throttleMs',
      ],
      [
        'throttle with uniqueForMs',
        { uniqueKey: 'k', throttleMs: 10, uniqueForMs: 10 },
        'uniqueForMs',
      ],
      ['debounce with delayMs', { uniqueKey: 'k', debounceMs: 10, delayMs: 10 }, 'delayMs'],
      ['debounce with runAt', { uniqueKey: 'k', debounceMs: 10, runAt: new Date() }, 'runAt'],
      ['a key holding U+001F', { uniqueKey: 'a\u001fb' }, 'uniqueKey'],
    ];

    it.each(refusals)('%s', async (_, options, field) => {
      const before = await countRows();
      const error = await app.queue.enqueue('bad', {}, options).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvalidJobInputError);
      expect(error).toMatchObject({ field });
      expect(await countRows()).toBe(before);
    });

    it('a period of at most the retention, or counting only unfinished jobs, is accepted', async () => {
      await expect(
        app.queue.enqueueWithOutcome(
          'ok',
          {},
          { uniqueKey: 'ok:1', uniqueStates: [...unfinished(), 'completed'], uniqueForMs: 60_000 },
        ),
      ).resolves.toMatchObject({ outcome: 'created' });
      // Cancelled jobs are kept forever here: any period is covered.
      await expect(
        app.queue.enqueueWithOutcome(
          'ok',
          {},
          { uniqueKey: 'ok:2', uniqueStates: [...unfinished(), 'cancelled'], uniqueForMs: 9e9 },
        ),
      ).resolves.toMatchObject({ outcome: 'created' });
      await expect(
        app.queue.enqueueWithOutcome('ok', {}, { uniqueKey: 'ok:3', uniqueForMs: 9e9 }),
      ).resolves.toMatchObject({ outcome: 'created' });
    });

    it('in a batch, the failing item is named and no item is written', async () => {
      const before = await countRows();
      const error = await app.queue
        .enqueueManyWithOutcome([
          { type: 'bad', data: {}, uniqueKey: 'fine' },
          { type: 'bad', data: {}, uniqueKey: 'k', debounceMs: -1 },
        ])
        .catch((e: unknown) => e);

      expect(error).toMatchObject({ field: 'jobs[1].debounceMs' });
      expect(await countRows()).toBe(before);
    });

    it('in a batch, items sharing a key with other uniqueness options are refused', async () => {
      const before = await countRows();
      const error = await app.queue
        .enqueueMany([
          { type: 'bad', data: {}, uniqueKey: 'shared', debounceMs: 1_000 },
          { type: 'bad', data: {}, uniqueKey: 'shared' },
        ])
        .catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvalidJobInputError);
      expect(error).toMatchObject({ field: 'jobs[1].uniqueKey', value: 'shared' });
      expect(await countRows()).toBe(before);
    });
  });

  it("the previous release's keyed insert still infers the unique index", async () => {
    const holder = await app.queue.enqueue('legacy', {}, { uniqueKey: 'legacy:1' });
    const inserted = await app.dataSource.query(
      `INSERT INTO job_queue.jobs (job_type, unique_key) VALUES ('legacy', 'legacy:1')
       ON CONFLICT (unique_key)
         WHERE unique_key IS NOT NULL
           AND status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
         DO NOTHING
       RETURNING id`,
    );

    expect(inserted).toEqual([]);
    expect(
      (await app.queue.enqueueWithOutcome('legacy', {}, { uniqueKey: 'legacy:1' })).job.id,
    ).toBe(holder.id);
  });
});

function unfinished(): JobStatus[] {
  return [
    JobStatus.Scheduled,
    JobStatus.Pending,
    JobStatus.Waiting,
    JobStatus.Claimed,
    JobStatus.Running,
  ];
}
