import type { Counter } from 'prom-client';

/**
 * A counter child fed in batches: each run adds to a plain number, and the number is added to
 * the counter when prom-client reads it (the counters' `collect`, see `createJobMetrics`). A
 * prom-client `inc` builds the label set's key and validates its labels on every call; once per
 * scrape instead of once per run, a scrape still reads every run counted.
 */
export class CountedSinceRead {
  private count = 0;

  constructor(private readonly counter: Counter.Internal) {}

  inc(): void {
    this.count++;
  }

  /** Adds what was counted since the last read to the counter. */
  flush(): void {
    if (this.count === 0) return;
    this.counter.inc(this.count);
    this.count = 0;
  }
}
