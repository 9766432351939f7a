import { Inject, Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { ListenConnection } from '../periodic/listen-connection';

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
  /** Why remote events are off here, if they are (see `remoteEventsOff`). */
  readonly offBecause: string | undefined;
  private readonly connection: ListenConnection;
  private holders = 0;
  /** The last `sync` round trip asked for. */
  private syncing: Promise<void> = Promise.resolve();
  /** Each payload of the channel, in arrival order. */
  onPayload: (payload: string | undefined) => void = () => undefined;
  /** After each (re)connect: what was notified while not listening was missed. */
  onConnected: () => void = () => undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
  ) {
    this.offBecause = remoteEventsOff(options);
    const schema = queueSchema(options.schema);
    const channel = schema.eventsChannel;
    this.connection = new ListenConnection({
      dataSource,
      applicationName: `job-events ${options.workerId}`,
      listen: schema.statement(LISTEN),
      logName: 'LISTEN connection for job events',
      whileLost: 'events of jobs other processes run are missed meanwhile; waitForJob polls',
      onNotification: (message) => {
        if (message.channel === channel) this.onPayload(message.payload);
      },
      onConnected: () => this.onConnected(),
    });
  }

  /** LISTENing now. */
  get connected(): boolean {
    return this.connection.client !== undefined;
  }

  /** One more holder: the first one connects. Resolves once that attempt is over, either way. */
  acquire(): Promise<void> {
    if (this.offBecause) return Promise.resolve();
    this.holders++;
    return this.connection.open();
  }

  /** One holder fewer: after the last one, the connection is closed. */
  async release(): Promise<void> {
    if (this.offBecause || this.holders === 0) return;
    this.holders--;
    if (this.holders === 0) await this.connection.close();
  }

  /**
   * Resolves once every notification committed before this call has reached `onPayload`: a
   * round trip on the LISTEN connection, whose server sends pending notifications before it
   * answers. Without a connection, at once. Never rejects.
   */
  sync(): Promise<void> {
    const client = this.connection.client;
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
}
