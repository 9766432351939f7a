import { Inject, Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JOB_QUEUE_DATA_SOURCE, RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { QueueSchema, queueSchema } from '../sql/queue-schema';
import { JobCancelledError } from '../errors';
import { ListenConnection } from '../periodic/listen-connection';
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
  private readonly connection: ListenConnection;
  private onNotify: (behind: boolean) => void = () => undefined;
  private onPaused: (jobType: string) => void = () => undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions,
    private readonly running: RunningJobs,
    private readonly prefetched: PrefetchedJobs,
  ) {
    const schema = queueSchema(options.schema);
    const { insertedChannel, cancelledChannel, pausedChannel } = schema;
    this.connection = new ListenConnection({
      dataSource,
      applicationName: `listen ${options.workerId}`,
      listen: schema.statement(LISTEN),
      logName: 'LISTEN connection',
      whileLost: 'polling continues',
      onNotification: (message) => {
        if (message.channel === insertedChannel) this.onNotify(Boolean(message.payload));
        else if (message.channel === cancelledChannel) this.cancelled(message.payload);
        else if (message.channel === pausedChannel && message.payload) {
          this.onPaused(message.payload);
        }
      },
      // Jobs inserted (or staged) while we were not listening would otherwise wait for the next
      // poll, or the next claim from the heads.
      onConnected: () => this.onNotify(true),
    });
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
    await this.connection.open();
  }

  /** Stops listening; no connection outlives it (an attempt under way is waited for). */
  stop(): Promise<void> {
    return this.connection.close();
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
}
