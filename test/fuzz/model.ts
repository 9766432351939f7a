/**
 * What the driver knows besides the database: the jobs and flows it made (so that operations can
 * name them), the types it paused, and every violation found. The database is the rest of the model: the invariants read it.
 */
import type { Operation } from './fuzz-types';

export interface Violation {
  /** The invariant's name (`invariants.ts`). */
  invariant: string;
  /** Which job or key broke it, and how. */
  message: string;
  /** The step at which it was found. */
  step: number;
  /** Set when the violation is a known defect (`KNOWN_DEFECTS`): reported, not failed. */
  knownDefect?: string;
}

export class FuzzModel {
  readonly jobIds: string[] = [];
  readonly flowIds: string[] = [];
  /** Type → when it was paused (ms, driver clock), while paused. */
  readonly paused = new Map<string, Promise<void>>();
  readonly violations: Violation[] = [];
  readonly operationLog: Array<{ step: number; operation: Operation; result: string }> = [];
  readonly counts = { operations: new Map<string, number>(), checks: new Map<string, number>() };
  step = 0;

  addJobs(ids: Array<string | number>): void {
    for (const id of ids) {
      const text = String(id);
      if (!this.jobIds.includes(text)) this.jobIds.push(text);
    }
  }

  checked(invariant: string): void {
    this.counts.checks.set(invariant, (this.counts.checks.get(invariant) ?? 0) + 1);
  }

  violate(invariant: string, message: string): void {
    this.violations.push({ invariant, message, step: this.step });
  }
}
