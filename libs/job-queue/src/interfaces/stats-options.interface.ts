/** Options of `QueueService.stats()`. @publicApi */
export interface StatsOptions {
  /**
   * The oldest snapshot of counts accepted, in milliseconds; an older one makes `stats()` count
   * the table itself (and store that as the new snapshot). `0`: count now, exactly. Default: three
   * of the refresher's waits, max(`statsIntervalMs`, 10 × the last count's duration).
   */
  maxAgeMs?: number;
}
