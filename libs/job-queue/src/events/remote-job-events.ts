import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { newDedicatedClient, PgClient } from '../sql/dedicated-connection';
import { databaseErrorText } from '../errors/database-error.util';
import { FailureBackoff } from '../periodic/failure-backoff';
import { LogPeriod } from '../periodic/log-period';

// LISTEN takes an identifier, not a parameter: the channel is the checked schema name and a suffix.
const LISTEN = (schema: QueueSchema): string => `LISTEN "${schema.eventsChannel}"`;

/** Why this process hears no other process's events, or `undefined` when it does. */
export function remoteEventsOff(options: ResolvedJobQueueOptions): string | undefined {
  if (!options.events.remote) return 'events.remote is false';
  if (options.worker !== false && !options.worker.listen) return 'worker.listen is false';
  return undefined;
}

/**
 * The LISTEN connection of `<schema>_job_events`, one per process, outside the app's pool (like
 * the worker's `JobListener`, whose connection it does not share: an enqueue-only process has no
 * worker, and events are wanted there too). Open while someone needs it (`acquire` / `release`:
 * the `@OnJobEvent` dispatcher for the app's life, `waitForJob` calls while they wait), closed
 * when nobody does, so waits that settle leave no connection behind. A lost connection is
 * re-established with back-off; what was notified meanwhile is missed (waits read their jobs
 * again on reconnect: `onConnected`).
 */
@Injectable()
export class RemoteJobEvents {
  private readonly logger = new Logger('JobQueue');
  private readonly backoff = new FailureBackoff(200);
  private readonly outageLog = new LogPeriod();
  private readonly schema: QueueSchema;
  private readonly workerId: string;
  /** Why remote events are off here, if they are (see `remoteEventsOff`). */
  readonly offBecause: string | undefined;
  private holders = 0;
  private client: PgClient | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  /** The last `sync` round trip asked for. */
  private syncing: Promise<void> = Promise.resolve();
  /** Each payload of the channel, in arrival order. */
  onPayload: (payload: string | undefined) => void = () => undefined;
  /** After each (re)connect: what was notified while not listening was missed. */
  onConnected: () => void = () => undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
  ) {
    this.schema = queueSchema(options.schema);
    this.workerId = options.workerId;
    this.offBecause = remoteEventsOff(options);
  }

  /** LISTENing now. */
  get connected(): boolean {
    return this.client !== undefined;
  }

  /** One more holder: the first one connects. Resolves once that attempt is over, either way. */
  acquire(): Promise<void> {
    if (this.offBecause) return Promise.resolve();
    this.holders++;
    if (this.holders === 1) return this.connectOnce();
    return this.connecting ?? Promise.resolve();
  }

  /** One holder fewer: after the last one, the connection is closed. */
  async release(): Promise<void> {
    if (this.offBecause || this.holders === 0) return;
    this.holders--;
    if (this.holders > 0) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting;
    if (this.holders === 0) await this.disconnect();
  }

  /**
   * Resolves once every notification committed before this call has reached `onPayload`: a
   * round trip on the LISTEN connection, whose server sends pending notifications before it
   * answers. Without a connection, at once. Never rejects.
   */
  sync(): Promise<void> {
    const client = this.client;
    if (!client) return Promise.resolve();
    // One round trip at a time (node-postgres no longer queues queries): each one starts after
    // the one before, so it still answers after everything committed before it was asked for.
    this.syncing = this.syncing.then(() =>
      client.query('SELECT 1').then(
        () => undefined,
        () => undefined,
      ),
    );
    return this.syncing;
  }

  private connectOnce(): Promise<void> {
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    if (this.holders === 0) return;
    let client: PgClient | undefined;
    try {
      client = newDedicatedClient(this.dataSource, `job-events ${this.workerId}`);
      const channel = this.schema.eventsChannel;
      client.on('notification', (message) => {
        if (message.channel === channel) this.onPayload(message.payload);
      });
      const opened = client;
      client.on('error', (error) => this.lost(opened, error));
      client.on('end', () => this.lost(opened));
      await client.connect();
      await client.query(this.schema.statement(LISTEN));
      if (this.holders === 0) {
        await this.close(client);
        return;
      }
      this.client = client;
      if (this.backoff.failing) this.logger.log('LISTEN connection for job events re-established');
      this.backoff.succeeded();
      this.outageLog.reset();
      this.onConnected();
    } catch (error) {
      if (client) await this.close(client);
      this.lost(client, error as Error);
    }
  }

  /** `client` broke (or could not connect): closes it and connects again after a back-off. */
  private lost(client: PgClient | undefined, error?: Error): void {
    if (this.holders === 0) return;
    if (client && this.client === client) {
      this.client = undefined;
      void this.close(client);
    }
    if (this.retryTimer) return;
    this.backoff.failed();
    if (this.outageLog.due()) {
      this.logger.warn(
        `LISTEN connection for job events lost${error ? `: ${databaseErrorText(error)}` : ''}; ` +
          `reconnecting every ${this.backoff.delayMs} ms or less (events of jobs other ` +
          'processes run are missed meanwhile; waitForJob polls)',
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
