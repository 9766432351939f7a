import { Injectable } from '@nestjs/common';
import { Client } from 'pg';
import { DataSource, Entity } from 'typeorm';
import {
  Job,
  JobContext,
  JobHandler,
  JobStatus,
  jobQueueMigrations,
  jobQueueMigrationsFor,
} from 'nest-pg-job-queue';
import { StaleJobReaper } from '../../libs/job-queue/src/maintenance/stale-job-reaper';
import { reaperLockKey } from '../../libs/job-queue/src/sql/queue-schema';
import { Gate } from '../support/gate';
import { sqlOn, TestSql } from '../support/roles';
import { waitFor } from '../support/wait-for';
import { useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const B = 'queue_b';

/** Each app's own: which jobs its handlers ran, and a run that waits for the test. */
@Injectable()
class SharedTypeHandlers {
  readonly ran: string[] = [];
  readonly started = new Set<string>();
  readonly aborted = new Set<string>();
  readonly gate = new Gate();

  @JobHandler('shared.work')
  work(job: Job): { ran: string } {
    this.ran.push(job.id);
    return { ran: job.id };
  }

  @JobHandler('shared.block')
  async block(job: Job, ctx: JobContext): Promise<{ unblocked: true }> {
    this.started.add(`${job.id}:${job.runToken}`);
    try {
      await this.gate.wait(ctx.signal);
    } catch (reason) {
      this.aborted.add(`${job.id}:${job.runToken}`);
      throw reason;
    }
    return { unblocked: true };
  }
}

/** How an app on another schema reads its table through a repository (see `Job`'s JSDoc). */
@Entity({ name: 'jobs', schema: B })
class QueueBJob extends Job {}

// Two queues in one database, in `job_queue` and `queue_b`: their tables, LISTEN channels and
// reaper locks are their own. Jobs of a type both handle are only ever run by their own queue's
// worker, a cancel in one never reaches a run in the other (the ids and run tokens below are the
// same on both sides), and each reaper takes its own lock.
describe('schema: two queues in one database', () => {
  let a: WorkerApp;
  let b: WorkerApp;
  let superuser: TestSql;

  const file = useWorkerTestFile({
    beforeClose: () => {
      a?.app.get(SharedTypeHandlers).gate.open();
      b?.app.get(SharedTypeHandlers).gate.open();
    },
  });

  beforeAll(async () => {
    superuser = sqlOn(file.url);
    // The template has the default schema's migrations; both lists in one DataSource, as an app
    // with two queues would have them, share its migrations table.
    const dataSource = new DataSource({
      type: 'postgres',
      url: file.url,
      migrations: [...jobQueueMigrations, ...jobQueueMigrationsFor({ schema: B })],
    });
    await dataSource.initialize();
    try {
      const ran = await dataSource.runMigrations();
      // Only B's ran (the default schema's were in the template), each named for B.
      const names = ran.map((migration) => migration.name);
      expect(names).toHaveLength(jobQueueMigrationsFor({ schema: B }).length);
      expect(names.slice(0, 2)).toEqual([
        `CreateJobsTable_${B}_1795939200000`,
        `CreateClaimJobBatchFunction_${B}_1795939200001`,
      ]);
      for (const name of names) expect(name).toMatch(new RegExp(`^[A-Za-z]+_${B}_\\d{13}$`));
    } finally {
      await dataSource.destroy();
    }
    const options = {
      // Only LISTEN wakes them (the first poll at start aside): see the cancel test.
      worker: { concurrency: 4, pollIntervalMs: 3_600_000 },
      heartbeatIntervalMs: 3_600_000,
      staleAfterMs: 3_600_001,
      reaperIntervalMs: 3_600_000, // rescueOnce() is called by the test
    };
    a = await file.start({ queueOptions: options, providers: [SharedTypeHandlers] });
    b = await file.start({
      queueOptions: { ...options, schema: B },
      providers: [SharedTypeHandlers],
    });
  });

  const jobsOf = (app: WorkerApp) => app.app.get(SharedTypeHandlers);
  const until = (app: WorkerApp, id: string, status: JobStatus) =>
    waitFor(async () => (await app.queue.getJob(id)).status === status, {
      description: `job ${id} to be ${status}`,
    });

  it('gives each schema its own migrations, named for it', () => {
    expect(jobQueueMigrationsFor().map((M) => new M().name)).toEqual(
      jobQueueMigrations.map((M) => new M().name),
    );
    expect(jobQueueMigrationsFor({ schema: B })).toEqual(jobQueueMigrationsFor({ schema: B }));
    expect(() => jobQueueMigrationsFor({ schema: 'Queue B' })).toThrow(/"schema"/);
  });

  it("runs each queue's jobs on its own worker only", async () => {
    await superuser(`SELECT pg_catalog.setval('${B}.jobs_id_seq', 1000)`); // ids apart
    const inA = await a.queue.enqueueMany(
      Array.from({ length: 10 }, (_, i) => ({ type: 'shared.work', data: { i } })),
    );
    const inB = await b.queue.enqueueMany(
      Array.from({ length: 10 }, (_, i) => ({ type: 'shared.work', data: { i } })),
    );
    for (const job of inA) await until(a, job.id, JobStatus.Completed);
    for (const job of inB) await until(b, job.id, JobStatus.Completed);
    expect(jobsOf(a).ran.sort()).toEqual(inA.map((job) => job.id).sort());
    expect(jobsOf(b).ran.sort()).toEqual(inB.map((job) => job.id).sort());
    const workers = await superuser(
      `SELECT 'a' AS queue, worker_id, pg_catalog.count(*)::int AS jobs FROM job_queue.jobs
         GROUP BY worker_id
       UNION ALL
       SELECT 'b', worker_id, pg_catalog.count(*)::int FROM ${B}.jobs GROUP BY worker_id
       ORDER BY 1`,
    );
    expect(workers).toEqual([
      { queue: 'a', worker_id: a.workerId, jobs: 10 },
      { queue: 'b', worker_id: b.workerId, jobs: 10 },
    ]);
  });

  it('wakes only the queue a job was inserted into', async () => {
    const listener = new Client({ connectionString: file.url });
    await listener.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (message) => heard.push(message.channel));
      await listener.query(`LISTEN job_queue_jobs_inserted`);
      await listener.query(`LISTEN ${B}_jobs_inserted`);
      await a.queue.enqueue('shared.work', {});
      await b.queue.enqueue('shared.work', {});
      await waitFor(() => heard.length >= 2, { description: 'two insert notifications' });
      expect(heard).toEqual(['job_queue_jobs_inserted', `${B}_jobs_inserted`]);
    } finally {
      await listener.end();
    }
  });

  it('never lets a cancel in one queue abort a run of the same id and token in the other', async () => {
    await superuser(
      `SELECT pg_catalog.setval('job_queue.jobs_id_seq', 5000),
              pg_catalog.setval('${B}.jobs_id_seq', 5000)`,
    );
    const inA = await a.queue.enqueue('shared.block', {});
    const inB = await b.queue.enqueue('shared.block', {});
    expect(inB.id).toBe(inA.id);
    const run = `${inA.id}:1`;
    await waitFor(() => jobsOf(a).started.has(run) && jobsOf(b).started.has(run));

    await a.queue.cancel(inA.id);
    await waitFor(() => jobsOf(a).aborted.has(run), { description: "A's run to abort" });
    // B's LISTEN connection gets its notifications in commit order: once the insert below (sent
    // after the cancel committed) has woken B's worker and run, a cancel on a channel B listens
    // to would already have been handled.
    const witness = await b.queue.enqueue('shared.work', {});
    await until(b, witness.id, JobStatus.Completed);
    expect(jobsOf(b).aborted.has(run)).toBe(false);
    jobsOf(b).gate.open();
    await until(b, inB.id, JobStatus.Completed);
    expect((await a.queue.getJob(inA.id)).status).toBe(JobStatus.Cancelled);
  });

  it('runs both reapers, each under its own advisory lock', async () => {
    // The key, as the README gives it in SQL.
    const [{ key }] = await superuser<{ key: string }>(
      `SELECT ('x' || left(encode(sha256(convert_to('nest-pg-job-queue:' || $1::text, 'UTF8')),
                                  'hex'), 16))::bit(64)::bigint::text AS key`,
      ['job_queue'],
    );
    expect(key).toBe(reaperLockKey('job_queue'));
    expect(reaperLockKey(B)).not.toBe(key);

    const orphan = async (jobs: string) => {
      const [{ id }] = await superuser<{ id: string }>(
        `INSERT INTO ${jobs} (job_type, status, worker_id, attempts, run_token, claimed_at,
                              heartbeat_at)
         VALUES ('shared.work', 'running', 'dead-worker', 1, 1, now() - interval '2 hours',
                 now() - interval '2 hours')
         RETURNING id::text AS id`,
      );
      return id;
    };
    const inA = await orphan('job_queue.jobs');
    const inB = await orphan(`${B}.jobs`);
    const reaperA = a.app.get(StaleJobReaper);
    const reaperB = b.app.get(StaleJobReaper);

    // Another session holds A's lock: A's reaper skips its pass, B's reaps all the same.
    const holder = new Client({ connectionString: file.url });
    await holder.connect();
    try {
      await holder.query(`SELECT pg_catalog.pg_advisory_lock($1::bigint)`, [key]);
      expect(await reaperA.rescueOnce()).toEqual([]);
      expect((await reaperB.rescueOnce()).map((job) => String(job.id))).toEqual([inB]);
      await holder.query(`SELECT pg_catalog.pg_advisory_unlock($1::bigint)`, [key]);
    } finally {
      await holder.end();
    }
    expect((await reaperA.rescueOnce()).map((job) => String(job.id))).toEqual([inA]);
  });

  it("reads the other schema's jobs through an entity of its own", async () => {
    const dataSource = new DataSource({
      type: 'postgres',
      url: file.url,
      entities: [Job, QueueBJob],
    });
    await dataSource.initialize();
    try {
      const inB = await b.queue.enqueue('shared.block', { only: 'b' }, { delayMs: 3_600_000 });
      const read = await dataSource.getRepository(QueueBJob).findOneByOrFail({ id: inB.id });
      expect(read).toMatchObject({ jobType: 'shared.block', data: { only: 'b' } });
      const [counts] = await superuser(
        `SELECT (SELECT pg_catalog.count(*)::int FROM job_queue.jobs) AS a,
                (SELECT pg_catalog.count(*)::int FROM ${B}.jobs) AS b`,
      );
      expect({
        a: await dataSource.getRepository(Job).count(),
        b: await dataSource.getRepository(QueueBJob).count(),
      }).toEqual(counts);
    } finally {
      await dataSource.destroy();
    }
  });
});
