import { Injectable } from '@nestjs/common';
import { ClsModule } from 'nestjs-cls';
import { ClsPluginTransactional, Transactional, TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { DataSource } from 'typeorm';
import { Job, QueueService } from 'nest-pg-job-queue';
import { startWorkerApp, useWorkerTestFile, WorkerApp } from '../support/worker-test-app';

const clsWithTransactions = () =>
  ClsModule.forRoot({
    global: true,
    plugins: [
      new ClsPluginTransactional({
        adapter: new TransactionalAdapterTypeOrm({ dataSourceToken: DataSource }),
      }),
    ],
  });

/** Writes an audit line and enqueues its job in one `@Transactional()` method. */
@Injectable()
class AuditService {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly queue: QueueService,
    private readonly dataSource: DataSource,
  ) {}

  @Transactional()
  async record(message: string, fail: boolean): Promise<Job> {
    await this.txHost.tx.query('INSERT INTO audit_log (message) VALUES ($1)', [message]);
    const job = await this.queue.enqueue('audit.followup', { message });
    if (fail) throw new Error('failed after the enqueue');
    return job;
  }

  /** An explicit manager wins over the ambient transaction: this job commits at once. */
  @Transactional()
  async recordWithOwnManager(message: string): Promise<Job> {
    await this.txHost.tx.query('INSERT INTO audit_log (message) VALUES ($1)', [message]);
    const [job] = await this.queue.enqueueMany([{ type: 'audit.followup', data: { message } }], {
      manager: this.dataSource.manager,
    });
    throw Object.assign(new Error('rolled back'), { job });
  }

  @Transactional()
  async recordMany(messages: string[], fail: boolean): Promise<Job[]> {
    const jobs = await this.queue.enqueueMany(
      messages.map((message) => ({ type: 'audit.followup', data: { message } })),
    );
    if (fail) throw new Error('failed after the enqueue');
    return jobs;
  }
}

describe('QueueService: enqueue joins the ambient transaction (transactionHost)', () => {
  const file = useWorkerTestFile();
  let app: WorkerApp;
  let audit: AuditService;

  beforeAll(async () => {
    app = await file.start({
      queueOptions: { worker: false, transactionHost: true },
      imports: [clsWithTransactions()],
      providers: [AuditService],
    });
    audit = app.app.get(AuditService);
    await app.dataSource.query(
      'CREATE TABLE audit_log (id bigserial PRIMARY KEY, message text NOT NULL)',
    );
  });

  async function written(message: string): Promise<{ lines: number; jobs: number }> {
    const [{ lines }] = await app.dataSource.query(
      'SELECT count(*)::int AS lines FROM audit_log WHERE message = $1',
      [message],
    );
    const [{ jobs }] = await app.dataSource.query(
      `SELECT count(*)::int AS jobs FROM job_queue.jobs WHERE data->>'message' = $1`,
      [message],
    );
    return { lines, jobs };
  }

  it('a @Transactional() method that writes, enqueues, then throws: neither exists', async () => {
    await expect(audit.record('thrown', true)).rejects.toThrow('failed after the enqueue');
    expect(await written('thrown')).toEqual({ lines: 0, jobs: 0 });
  });

  it('the same without the throw: both exist', async () => {
    const job = await audit.record('kept', false);
    expect(await written('kept')).toEqual({ lines: 1, jobs: 1 });
    expect((await app.queue.getJob(job.id)).data).toEqual({ message: 'kept' });
  });

  it('enqueueMany joins it too', async () => {
    await expect(audit.recordMany(['many-a', 'many-b'], true)).rejects.toThrow();
    expect(await written('many-a')).toEqual({ lines: 0, jobs: 0 });
    await audit.recordMany(['many-c'], false);
    expect(await written('many-c')).toEqual({ lines: 0, jobs: 1 });
  });

  it('an explicit manager wins', async () => {
    await expect(audit.recordWithOwnManager('own')).rejects.toThrow('rolled back');
    expect(await written('own')).toEqual({ lines: 0, jobs: 1 });
  });

  it('outside a transaction nothing changes', async () => {
    const job = await app.queue.enqueue('audit.followup', { message: 'outside' });
    expect(await written('outside')).toEqual({ lines: 0, jobs: 1 });
    expect(job.id).toBeDefined();
  });

  it('fails the boot when no TransactionHost is registered', async () => {
    await expect(
      startWorkerApp({ url: file.url, queueOptions: { worker: false, transactionHost: true } }),
    ).rejects.toThrow(/transactionHost.*ClsPluginTransactional/s);
  });

  it('without the option, enqueue does not join it', async () => {
    const plain = await startWorkerApp({
      url: file.url,
      queueOptions: { worker: false },
      imports: [clsWithTransactions()],
    });
    try {
      const txHost = plain.app.get(TransactionHost);
      await expect(
        txHost.withTransaction(async () => {
          await plain.queue.enqueue('audit.followup', { message: 'not joined' });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await written('not joined')).toEqual({ lines: 0, jobs: 1 });
    } finally {
      await plain.close();
    }
  });
});
