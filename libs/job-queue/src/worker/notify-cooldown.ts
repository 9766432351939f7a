/**
 * After a poll woken by an insert notification found nothing, further notifications wait until
 * this long after that poll started, and share one poll.
 */
export const NOTIFY_COOLDOWN_MS = 50;

/**
 * When an insert notification may wake a poll. Any role that can connect can NOTIFY the insert
 * channel, so a notification is a hint, not proof of work. The first one after a quiet spell
 * polls at once (idle latency is what LISTEN is for), and so does every one while the polls they
 * wake keep finding jobs. Once such a poll found nothing, the notifications that arrive within
 * `periodMs` of its start wait for the period to end and share one poll: a flood of them costs at
 * most one claim per period.
 */
export class NotifyCooldown {
  private quietUntil = 0;

  constructor(private readonly periodMs = NOTIFY_COOLDOWN_MS) {}

  /** How long a notification that arrives at `now` waits before it polls; 0: at once. */
  waitMs(now = Date.now()): number {
    return Math.max(0, this.quietUntil - now);
  }

  /** A poll woken by a notification, started at `startedAt`, claimed `claimed` jobs. */
  polled(claimed: number, startedAt: number): void {
    this.quietUntil = claimed > 0 ? 0 : startedAt + this.periodMs;
  }
}
