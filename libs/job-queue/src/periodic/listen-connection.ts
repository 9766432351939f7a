import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { newDedicatedClient, PgClient } from '../sql/dedicated-connection';
import { databaseErrorText } from '../errors/database-error.util';
import { FailureBackoff } from './failure-backoff';
import { LogPeriod } from './log-period';

/** What one LISTEN connection is for: how it is named, what it listens to, whom it tells. */
export interface ListenConnectionSpec {
  /** The pool whose settings (host, credentials, TLS, `extra`) the connection copies. */
  dataSource: DataSource;
  /** Its `application_name` after `nest-pg-job-queue ` (see `newDedicatedClient`). */
  applicationName: string;
  /** The LISTEN statement(s) it sends once connected. */
  listen: string;
  /** How the logs name it: `LISTEN connection`, `LISTEN connection for job events`. */
  logName: string;
  /** What the outage warning says goes on meanwhile, in parentheses. */
  whileLost: string;
  onNotification: (message: { channel: string; payload?: string }) => void;
  /** After each (re)connect: what was notified while not listening was missed. */
  onConnected: () => void;
}

/**
 * One connection of its own (outside the app's pool) in LISTEN, kept open while it is wanted
 * (`open` to `close`): a connection that breaks, or cannot be made, is made again after a
 * back-off, its loss logged once per period. The worker's `JobListener` and the job events'
 * `RemoteJobEvents` each hold one, for their own channels.
 */
export class ListenConnection {
  private readonly logger = new Logger('JobQueue');
  private readonly backoff = new FailureBackoff(200);
  private readonly outageLog = new LogPeriod();
  private wanted = false;
  private current: PgClient | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  /** A connection attempt under way: `close()` waits for it, so no connection outlives it. */
  private connecting: Promise<void> | undefined;

  constructor(private readonly spec: ListenConnectionSpec) {}

  /** The client in LISTEN now, if any. */
  get client(): PgClient | undefined {
    return this.current;
  }

  /** Wants the connection: connects, unless wanted already. Resolves once the attempt is over. */
  open(): Promise<void> {
    if (this.wanted) return this.connecting ?? Promise.resolve();
    this.wanted = true;
    return this.connectOnce();
  }

  /** Wants it no more: stops reconnecting, waits for an attempt under way, then closes it. */
  async close(): Promise<void> {
    this.wanted = false;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting;
    // Wanted again while that attempt ended (open() joined it): it keeps its connection.
    if (this.wanted) return;
    const client = this.current;
    this.current = undefined;
    if (client) await this.end(client);
  }

  private connectOnce(): Promise<void> {
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    if (!this.wanted) return;
    let client: PgClient | undefined;
    try {
      client = newDedicatedClient(this.spec.dataSource, this.spec.applicationName);
      client.on('notification', (message) => this.spec.onNotification(message));
      const opened = client;
      client.on('error', (error) => this.lost(opened, error));
      client.on('end', () => this.lost(opened));
      await client.connect();
      await client.query(this.spec.listen);
      if (!this.wanted) {
        await this.end(client);
        return;
      }
      this.current = client;
      if (this.backoff.failing) this.logger.log(`${this.spec.logName} re-established`);
      this.backoff.succeeded();
      this.outageLog.reset();
      this.spec.onConnected();
    } catch (error) {
      if (client) await this.end(client);
      this.lost(client, error as Error);
    }
  }

  /** `client` broke (or could not connect): closes it and connects again after a back-off. */
  private lost(client: PgClient | undefined, error?: Error): void {
    if (!this.wanted) return;
    if (client && this.current === client) {
      this.current = undefined;
      void this.end(client);
    }
    if (this.retryTimer) return;
    this.backoff.failed();
    if (this.outageLog.due()) {
      this.logger.warn(
        `${this.spec.logName} lost${error ? `: ${databaseErrorText(error)}` : ''}; ` +
          `reconnecting every ${this.backoff.delayMs} ms or less (${this.spec.whileLost})`,
      );
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connectOnce();
    }, this.backoff.delayMs);
  }

  /** Ends `client`: its listeners go with it, and a late socket error is swallowed. */
  private async end(client: PgClient): Promise<void> {
    client.removeAllListeners();
    client.on('error', () => undefined);
    await client.end().catch(() => undefined);
  }
}
