import { DataSource, EntityManager, QueryRunner } from 'typeorm';

/**
 * The transaction of one run (`@JobHandler(type, { transaction: true })` or `ctx.transaction`):
 * a pooled connection held from `open` until the run commits or gives up. The handler writes
 * through `manager`; the executor then writes the job's outcome in it and commits, so both land
 * or neither does. Nothing here touches the job's row before that last write: no lock on it is
 * held across the run.
 */
export class RunTransaction {
  private closed = false;

  private constructor(private readonly runner: QueryRunner) {}

  /** Takes a pooled connection and begins; the connection goes back if BEGIN fails. */
  static async open(dataSource: DataSource): Promise<RunTransaction> {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
    } catch (error) {
      await runner.release().catch(() => undefined);
      throw error;
    }
    return new RunTransaction(runner);
  }

  get manager(): EntityManager {
    return this.runner.manager;
  }

  /** Whether the transaction committed or was given up: nothing more goes through it. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Commits and hands the connection back. A failure leaves the connection closed. */
  async commit(): Promise<void> {
    this.closed = true;
    try {
      await this.runner.commitTransaction();
    } catch (error) {
      this.discardConnection(error);
      throw error;
    }
    await this.runner.release();
  }

  /**
   * Gives the transaction up. `handlerDone`: the handler has settled, so nothing else uses the
   * connection: a ROLLBACK, and the connection goes back to the pool. Otherwise (a handler
   * aborted by a timeout, a cancel or shutdown may still be running) the connection is closed
   * first, at once: the handler's next statement fails instead of running outside the
   * transaction, and PostgreSQL rolls the transaction back when it sees the connection gone.
   */
  async rollback(handlerDone: boolean): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (!handlerDone) {
      this.discardConnection(new Error('the run was aborted; its transaction is rolled back'));
      return;
    }
    try {
      await this.runner.rollbackTransaction();
      await this.runner.release();
    } catch (error) {
      this.discardConnection(error);
    }
  }

  /**
   * Releases the connection as broken, so the pool closes it instead of reusing it. NOTE:
   * TypeORM's public `release()` takes no error and would hand a connection that is in a
   * transaction, or mid-statement, back to the pool; its Postgres query runner's
   * `releasePostgresConnection(error)` passes the error on to pg's pool, which then ends the
   * client. It marks the runner released first, synchronously, so later statements throw.
   */
  private discardConnection(error: unknown): void {
    const runner = this.runner as unknown as {
      releasePostgresConnection?: (error: unknown) => Promise<void>;
    };
    if (typeof runner.releasePostgresConnection === 'function') {
      void runner.releasePostgresConnection(error).catch(() => undefined);
    } else {
      void this.runner.release().catch(() => undefined);
    }
  }
}
