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
}
