/**
 * One log line per key per period while a condition lasts (a schedule this node cannot plan,
 * every tick): the first at once, then at most one each `periodMs`. Times are the caller's clock
 * (the tick's database time), so a test that moves a tick's time moves this too. Keys whose last
 * line is a period old are forgotten, so deleted schedules do not pile up.
 */
export class KeyedLogPeriod {
  private readonly loggedAt = new Map<string, number>();

  constructor(private readonly periodMs: number) {}

  /** True when `key` may log now; its next line is then due a period later. */
  due(key: string, nowMs: number): boolean {
    const last = this.loggedAt.get(key);
    if (last !== undefined && nowMs - last < this.periodMs && nowMs >= last) return false;
    this.loggedAt.set(key, nowMs);
    return true;
  }

  /** The condition is over for `key`: its next occurrence logs at once. */
  clear(key: string): void {
    this.loggedAt.delete(key);
  }

  /** Forgets keys that have not logged for a period (none of them is still due a wait). */
  prune(nowMs: number): void {
    for (const [key, last] of this.loggedAt) {
      if (nowMs - last >= this.periodMs || nowMs < last) this.loggedAt.delete(key);
    }
  }
}
