/**
 * A barrier a test opens: handlers `await gate.wait(ctx.signal)` and stay running until the test
 * calls `open()`, or until their signal aborts (then `wait` rejects with the signal's reason).
 */
export class Gate {
  private release!: () => void;
  private readonly opened = new Promise<void>((resolve) => (this.release = resolve));
  private opens = false;

  get isOpen(): boolean {
    return this.opens;
  }

  /** Lets every waiter, present and future, through. */
  open(): void {
    this.opens = true;
    this.release();
  }

  wait(signal?: AbortSignal): Promise<void> {
    if (!signal) return this.opened;
    return Promise.race([this.opened, untilAborted(signal)]);
  }
}

/** Never resolves; rejects with `signal.reason` once the signal aborts. */
export function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/** Stands for a handler's real work: a short, fixed amount of time. Not a wait for a condition. */
export function simulateWork(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
