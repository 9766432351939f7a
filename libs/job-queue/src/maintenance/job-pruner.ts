import { Injectable } from '@nestjs/common';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { databaseErrorText } from '../errors/database-error.util';
import { queueSchema } from '../sql/queue-schema';
import { Queryable } from '../sql/queryable';
import { storeRetention } from '../sql/store-retention.query';
import { MaintenanceContext, MaintenanceTask } from '../periodic/maintenance-task';
import { pruneInBatches } from './prune-in-batches';

/**
 * Longest a pass keeps deleting: a backlog bigger than that (retention just shortened, or
 * pruning off for a while) is worked off over several passes, and `stop()` never waits long.
 */
export const PRUNE_PASS_MAX_MS = 30_000;

/**
 * Deletes finished jobs older than their retention, every `retentionIntervalMs`, in statements
 * of at most `PRUNE_BATCH_SIZE` jobs. Every worker runs one; a transaction-scoped advisory lock
 * (`queueSchema(schema).lockKey('prune')`) lets one statement of one node run at a time, and a
 * node that finds it taken ends its pass.
 *
 * Every node prunes alike, also types it has no handler for: when the worker starts, this node
 * stores its handlers' retention in `job_types`, and each pass applies the stored retention of
 * every type, or this node's module `retention` to a type none was stored for.
 */
@Injectable()
export class JobPruner extends MaintenanceTask {
  /** The handlers' retention still to store (the database did not answer at start). */
  private retentionStored = true;
  private stopping = false;

  constructor(
    context: MaintenanceContext,
    private readonly registry: JobHandlerRegistry,
  ) {
    super(context, {
      kind: 'pruner',
      periodMs: (options) => options.retentionIntervalMs,
      failure: 'Pruning finished jobs failed',
    });
  }

  protected runOnce(): Promise<unknown> {
    return this.pruneOnce();
  }

  /** Stores this node's handlers' retention (retried by each pass if that fails), then ticks. */
  override async start(): Promise<void> {
    this.stopping = false;
    this.retentionStored = false;
    try {
      await this.storeRetention();
    } catch (error) {
      this.logger.warn(
        `Could not store the handlers' retention (${databaseErrorText(error)}); ` +
          `the pruner tries again at each pass`,
      );
    }
    super.start();
  }

  override stop(): Promise<void> {
    this.stopping = true;
    return super.stop();
  }

  /**
   * One pass: deletes finished jobs past their retention at the queue's time `now` (null: the
   * database's), through `db` (the testing kit passes its clock's time and a test's
   * transaction), a page per statement, each after the last (past the jobs it keeps for their
   * dependants), until a page reads less than a batch, another node holds the lock or
   * `PRUNE_PASS_MAX_MS` has passed; returns how many it deleted.
   */
  async pruneOnce(now: Date | null = null, db: Queryable = this.dataSource): Promise<number> {
    if (!this.retentionStored) await this.storeRetention();
    const { deleted } = await pruneInBatches(
      db,
      this.options.schema,
      { defaults: this.options.retention, olderThanMs: null, statuses: null, types: null },
      {
        lockKey: queueSchema(this.options.schema).lockKey('prune'),
        deadline: Date.now() + PRUNE_PASS_MAX_MS,
        stopping: () => this.stopping,
        now,
      },
    );
    if (deleted > 0) this.logger.debug(`Pruned ${deleted} finished job(s)`);
    return deleted;
  }

  /** Stores this node's handlers' retention in `job_types` (the testing kit calls it too). */
  async storeRetention(): Promise<void> {
    await storeRetention(
      this.dataSource,
      this.options.schema,
      this.registry.all().map((handler) => ({
        jobType: handler.jobType,
        retention: handler.options.retention,
      })),
    );
    this.retentionStored = true;
  }
}
