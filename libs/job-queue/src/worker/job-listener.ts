import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, JOBS_INSERTED_CHANNEL } from '../job-queue.constants';
import { FailureBackoff } from './failure-backoff';
import { LogPeriod } from './log-period';

interface NotifyingClient {
  on(event: 'notification', listener: (message: { channel: string }) => void): void;
  on(event: 'error' | 'end', listener: (error?: Error) => void): void;
  removeAllListeners(event?: string): void;
}

/**
 * Holds one pooled connection in LISTEN on the jobs-inserted channel and calls `onNotify` for
 * each notification, so an idle worker starts a new job in about a millisecond instead of at the
 * next poll. Polling stays the source of truth: a lost connection only costs latency, and is
 * re-established with back-off.
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

  constructor(@Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource) {}

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
      client.on('notification', (message) => {
        if (message.channel === JOBS_INSERTED_CHANNEL) this.onNotify();
      });
      client.on('error', (error) => this.lost(error));
      client.on('end', () => this.lost());
      await queryRunner.query(`LISTEN ${JOBS_INSERTED_CHANNEL}`);
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

  private lost(error?: Error): void {
    if (this.stopped) return;
    const queryRunner = this.queryRunner;
    this.queryRunner = undefined;
    if (queryRunner) void this.release(queryRunner, error ?? new Error('LISTEN connection ended'));
    if (this.retryTimer) return;
    this.backoff.failed();
    if (this.outageLog.due()) {
      this.logger.warn(
        `LISTEN connection lost${error ? `: ${error.message}` : ''}; ` +
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
    await queryRunner.query(`UNLISTEN ${JOBS_INSERTED_CHANNEL}`).catch(() => undefined);
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
