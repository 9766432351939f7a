import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { newDedicatedClient, PgClient } from '../sql/dedicated-connection';
import { JobCancelledError } from '../errors';
import { databaseErrorText } from '../errors/database-error.util';
import { FailureBackoff } from '../periodic/failure-backoff';
import { LogPeriod } from '../periodic/log-period';
import { PrefetchedJobs } from './prefetched-jobs';
import { RunningJobs } from './running-jobs';

// LISTEN takes an identifier, not a parameter; the channels are made from the validated schema
// name (lowercase letters, digits, _), quoted all the same.
const LISTEN = (schema: QueueSchema): string =>
  `LISTEN "${schema.insertedChannel}"; LISTEN "${schema.cancelledChannel}"; ` +
  `LISTEN "${schema.pausedChannel}"`;

/**
 * Holds one connection of its own (outside the app's pool, like the heartbeat's) in LISTEN on
 * three channels, all the queue schema's own (`<schema>_jobs_inserted`, `<schema>_job_cancelled`,
 * `<schema>_job_type_paused`: a queue in another schema of the same database neither wakes this
 * worker nor cancels or pauses its runs):
 * - jobs inserted: calls `onNotify` for each notification, so an idle worker starts a new job in
 *   about a millisecond instead of at the next poll;
 * - job cancelled (`<id>:<run token>`, sent by `cancel()` as it commits): aborts that very run's
 *   `ctx.signal` with `JobCancelledError` at once, if this worker runs it; another run of the
 *   same job (a retry claimed since) is left alone;
 * - job type paused (the type, sent by `pause()` as it commits): hands back the held jobs of that
 *   type (`JobPoller.dropPaused`).
 * Polling and the heartbeat stay the source of truth: a lost connection only costs latency (new
 * jobs wait for the next poll, cancels and pauses for the next heartbeat), and is re-established
 * with back-off. Stopping closes the connection, so start/stop cycles leave nothing behind.
 */
@Injectable()
export class JobListener {
  private readonly logger = new Logger('JobQueue');
  private readonly backoff = new FailureBackoff(200);
  private readonly outageLog = new LogPeriod();
  private client: PgClient | undefined;
  private stopped = true;
  private retryTimer: NodeJS.Timeout | undefined;
  /** A connection attempt under way: `stop()` waits for it, so no connection outlives a stop. */
  private connecting: Promise<void> | undefined;
  private onNotify: (behind: boolean) => void = () => undefined;
  private onPaused: (jobType: string) => void = () => undefined;
  private readonly schema: QueueSchema;
  private readonly workerId: string;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly prefetched: PrefetchedJobs,
  ) {
    this.schema = queueSchema(options.schema);
    this.workerId = options.workerId;
  }

  /**
   * Listens: `onNotify` for inserted jobs (`behind`: a notification with a payload, sent by
   * whatever made jobs pending that were in the queue already, see `PENDING_AGAIN_PAYLOAD`; the
   * insert trigger's has none), `onPaused` with each job type paused.
   */
  async start(
    onNotify: (behind: boolean) => void,
    onPaused: (jobType: string) => void,
  ): Promise<void> {
    this.onNotify = onNotify;
    this.onPaused = onPaused;
    this.stopped = false;
    await this.connectOnce();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting;
    await this.disconnect();
  }

  private connectOnce(): Promise<void> {
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let client: PgClient | undefined;
    try {
      client = newDedicatedClient(this.dataSource, `listen ${this.workerId}`);
      const { insertedChannel, cancelledChannel, pausedChannel } = this.schema;
      client.on('notification', (message) => {
        if (message.channel === insertedChannel) this.onNotify(Boolean(message.payload));
        else if (message.channel === cancelledChannel) this.cancelled(message.payload);
        else if (message.channel === pausedChannel && message.payload) {
          this.onPaused(message.payload);
        }
      });
      const opened = client;
      client.on('error', (error) => this.lost(opened, error));
      client.on('end', () => this.lost(opened));
      await client.connect();
      await client.query(this.schema.statement(LISTEN));
      if (this.stopped) {
        await this.close(client);
        return;
      }
      this.client = client;
      if (this.backoff.failing) this.logger.log('LISTEN connection re-established');
      this.backoff.succeeded();
      this.outageLog.reset();
      // Jobs inserted (or staged) while we were not listening would otherwise wait for the next
      // poll, or the next claim from the heads.
      this.onNotify(true);
    } catch (error) {
      if (client) await this.close(client);
      this.lost(client, error as Error);
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

  /** `client` broke (or could not connect): closes it and connects again after a back-off. */
  private lost(client: PgClient | undefined, error?: Error): void {
    if (this.stopped) return;
    if (client && this.client === client) {
      this.client = undefined;
      void this.close(client);
    }
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
      void this.connectOnce();
    }, this.backoff.delayMs);
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await this.close(client);
  }

  /** Ends `client`: its listeners go with it, and a late socket error is swallowed. */
  private async close(client: PgClient): Promise<void> {
    client.removeAllListeners();
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }
}
