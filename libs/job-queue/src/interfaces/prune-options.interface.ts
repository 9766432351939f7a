/**
 * What `QueueService.prune()` deletes: finished jobs only, always.
 *
 * @publicApi
 */
export interface PruneOptions {
  /**
   * Delete finished jobs that finished more than this many milliseconds ago, whatever their
   * type's retention (even `false`). Default: each type's retention, as the pruner applies it.
   */
  olderThanMs?: number;
  /** Only jobs in these finished statuses. Default: `completed`, `failed` and `cancelled`. */
  statuses?: Array<'completed' | 'failed' | 'cancelled'>;
  /** Only jobs of these types. Default: every type. */
  types?: string[];
  /**
   * Resolve with a `PruneReport` (what was deleted and what was kept, and why) instead of the
   * number deleted. Default: false.
   */
  report?: boolean;
}

/**
 * What `QueueService.prune({ report: true })` did.
 *
 * @publicApi
 */
export interface PruneReport {
  /** Finished jobs deleted. */
  deleted: number;
  /**
   * Finished jobs old enough to go that were kept, by reason. `dependants`: an unfinished job
   * depends on them (its handler reads their results); they go at a later prune, once it has
   * finished.
   */
  kept: { dependants: number };
}
