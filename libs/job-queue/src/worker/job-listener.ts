import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../job-queue.options';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { JobCancelledError } from '../errors';
import { databaseErrorText } from '../errors/database-error.util';
import { FailureBackoff } from './failure-backoff';
import { LogPeriod } from './log-period';
import { PrefetchedJobs } from './prefetched-jobs';
import { RunningJobs } from './running-jobs';

// LISTEN takes an identifier, not a parameter; the channels are made from the validated schema
// name (lowercase letters, digits, _), quoted all the same.
const LISTEN_INSERTED = (schema: QueueSchema): string => `LISTEN "${schema.insertedChannel}"`;
const LISTEN_CANCELLED = (schema: QueueSchema): string => `LISTEN "${schema.cancelledChannel}"`;
const UNLISTEN_INSERTED = (schema: QueueSchema): string => `UNLISTEN "${schema.insertedChannel}"`;
const UNLISTEN_CANCELLED = (schema: QueueSchema): string => `UNLISTEN "${schema.cancelledChannel}"`;

interface NotifyingClient {
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): void;
  on(event: 'error' | 'end', listener: (error?: Error) => void): void;
  removeAllListeners(event?: string): void;
}

/**
 * Holds one pooled connection in LISTEN on two channels, both the queue schema's own
 * (`<schema>_jobs_inserted`, `<schema>_job_cancelled`: a queue in another schema of the same
 * database neither wakes this worker nor cancels its runs):
 * - jobs inserted: calls `onNotify` for each notification, so an idle worker starts a new job in
 *   about a millisecond instead of at the next poll;
 * - job cancelled (`<id>:<run token>`, sent by `cancel()` as it commits): aborts that very run's
 *   `ctx.signal` with `JobCancelledError` at once, if this worker runs it; another run of the
 *   same job (a retry claimed since) is left alone.
 * Polling and the heartbeat stay the source of truth: a lost connection only costs latency (new
 * jobs wait for the next poll, cancels for the next heartbeat), and is re-established with
 * back-off.
 */
@Injectable()
export class JobListener {
  private readonly logger = new Logger('JobQueue');
  private readonly backoff = new FailureBackoff(200);
  private readonly outageLog = new LogPeriod();
  private queryRunner: QueryRunner | undefined;
  private stopped = true;
  private retryTimer: NodeJS.Timeout | undefined;
  private onNotify: () => void = () => undefined;
  private readonly schema: QueueSchema;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly prefetched: PrefetchedJobs,
  ) {
    this.schema = queueSchema(options.schema);
  }

  async start(onNotify: () => void): Promise<void> {
    this.onNotify = onNotify;
    this.stopped = false;
    await this.connect();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    await this.disconnect();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const queryRunner = this.dataSource.createQueryRunner();
    try {
      const client = (await queryRunner.connect()) as NotifyingClient;
      const { insertedChannel, cancelledChannel } = this.schema;
      client.on('notification', (message) => {
        if (message.channel === insertedChannel) this.onNotify();
        else if (message.channel === cancelledChannel) this.cancelled(message.payload);
      });
      client.on('error', (error) => this.lost(error));
      client.on('end', () => this.lost());
      await queryRunner.query(this.schema.statement(LISTEN_INSERTED));
      await queryRunner.query(this.schema.statement(LISTEN_CANCELLED));
      this.queryRunner = queryRunner;
      if (this.backoff.failing) this.logger.log('LISTEN connection re-established');
      this.backoff.succeeded();
      this.outageLog.reset();
      // Jobs inserted while we were not listening would otherwise wait for the next poll.
      this.onNotify();
    } catch (error) {
      await queryRunner.release().catch(() => undefined);
      this.lost(error as Error);
    }
  }

  /** `<id>:<run token>` of a cancelled run: aborts it if it runs here, drops it if prefetched. */
  private cancelled(payload: string | undefined): void {
    const separator = payload?.lastIndexOf(':') ?? -1;
    if (!payload || separator < 1) return;
    const id = payload.slice(0, separator);
    const token = Number(payload.slice(separator + 1));
    this.running.get(id, token)?.abort(new JobCancelledError(id));
    if (this.prefetched.dropRuns([{ id, token }]).length > 0) {
      this.logger.debug(`Prefetched job ${id} was cancelled: dropped before it started`);
    }
  }

  private lost(error?: Error): void {
    if (this.stopped) return;
    const queryRunner = this.queryRunner;
    this.queryRunner = undefined;
    if (queryRunner) void this.release(queryRunner, error ?? new Error('LISTEN connection ended'));
    if (this.retryTimer) return;
    this.backoff.failed();
    if (this.outageLog.due()) {
      this.logger.warn(
        `LISTEN connection lost${error ? `: ${databaseErrorText(error)}` : ''}; ` +
          `reconnecting every ${this.backoff.delayMs} ms or less (polling continues)`,
      );
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.backoff.delayMs);
  }

  private async disconnect(): Promise<void> {
    const queryRunner = this.queryRunner;
    this.queryRunner = undefined;
    if (!queryRunner) return;
    await queryRunner.query(this.schema.statement(UNLISTEN_INSERTED)).catch(() => undefined);
    await queryRunner.query(this.schema.statement(UNLISTEN_CANCELLED)).catch(() => undefined);
    await this.release(queryRunner);
  }

  private async release(queryRunner: QueryRunner, error?: Error): Promise<void> {
    const client = (queryRunner as unknown as { databaseConnection?: NotifyingClient })
      .databaseConnection;
    client?.removeAllListeners('notification');
    client?.removeAllListeners('end');
    // NOTE: release() cannot pass an error on; releasePostgresConnection(error) makes pg-pool
    // destroy the client, so a broken connection never goes back to the pool for someone else.
    const releasable = queryRunner as unknown as {
      releasePostgresConnection?(e?: Error): Promise<void>;
    };
    const released =
      error && releasable.releasePostgresConnection
        ? releasable.releasePostgresConnection(error)
        : queryRunner.release();
    await released.catch(() => undefined);
  }
}
