import { DataSource } from 'typeorm';
import { Queryable } from './queryable';

/** What this module needs of a node-postgres `Client` (the pool's own class). */
export interface PgClient {
  connect(): Promise<void>;
  query(sql: string, parameters?: unknown[]): Promise<{ rows: unknown[] }>;
  end(): Promise<void>;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(
    event: 'notification',
    listener: (message: { channel: string; payload?: string }) => void,
  ): unknown;
  removeAllListeners(event?: string): unknown;
}

interface PgPool {
  options: Record<string, unknown>;
  Client: new (options: Record<string, unknown>) => PgClient;
  /** The clients the pool holds now (pg-pool's own field; read by tests). */
  _clients?: PgClient[];
}

/**
 * The data source's pool (node-postgres `Pool`); with replication, the master's. Undefined before
 * the data source is initialised, or for a driver that is not node-postgres.
 */
export function dataSourcePool(dataSource: DataSource): PgPool | undefined {
  const pool = (dataSource.driver as unknown as { master?: Partial<PgPool> }).master;
  return pool?.options && typeof pool.Client === 'function' ? (pool as PgPool) : undefined;
}

/** How many connections the data source's pool opens at most (pg-pool's default: 10). */
export function poolMax(dataSource: DataSource): number {
  const max = dataSourcePool(dataSource)?.options.max;
  return typeof max === 'number' && max > 0 ? max : 10;
}

/**
 * A new client with exactly the settings the data source's pool connects with (host,
 * credentials, TLS, `extra`), outside the pool: what it does can never wait behind the app's
 * queries for a free pooled connection. `purpose` (say `listen <workerId>`) names it in
 * `pg_stat_activity` as `nest-pg-job-queue <purpose>` (`application_name`, which PostgreSQL cuts
 * at 63 bytes), unless the app set a name of its own.
 */
export function newDedicatedClient(dataSource: DataSource, purpose: string): PgClient {
  const pool = dataSourcePool(dataSource);
  if (!pool) throw new Error('The data source is not initialised, or not node-postgres');
  const { max: _max, idleTimeoutMillis: _idle, Client: _client, ...connection } = pool.options;
  connection.application_name ??= `nest-pg-job-queue ${purpose}`;
  return new pool.Client(connection);
}

/**
 * One connection of its own, opened on first use and again after it broke, for a periodic task
 * whose statements must not queue for the pool (the heartbeat). A `Queryable`, so the query
 * functions of this folder run on it as on a `DataSource`.
 */
export class DedicatedConnection implements Queryable {
  private client: Promise<PgClient> | undefined;

  constructor(
    private readonly dataSource: DataSource,
    private readonly purpose: string,
  ) {}

  async query(sql: string, parameters?: unknown[]): Promise<unknown[]> {
    // A broken connection emits 'error' (see connected()) and is replaced at the next call.
    const client = await this.connected();
    return (await client.query(sql, parameters)).rows;
  }

  /** Closes the connection (if open); the next query opens a new one. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    const open = await client.catch(() => undefined);
    if (!open) return;
    open.removeAllListeners();
    open.on('error', () => undefined); // a late socket error must not become an uncaught one
    await open.end().catch(() => undefined);
  }

  private connected(): Promise<PgClient> {
    if (!this.client) {
      const client = newDedicatedClient(this.dataSource, this.purpose);
      const opening = client.connect().then(() => client);
      this.client = opening;
      const forget = () => {
        if (this.client !== opening) return;
        this.client = undefined;
        client.end().catch(() => undefined);
      };
      client.on('error', forget);
      client.on('end', forget);
      opening.catch(forget);
    }
    return this.client;
  }
}
