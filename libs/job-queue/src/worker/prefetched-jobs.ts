import { Inject, Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { RESOLVED_JOB_QUEUE_OPTIONS } from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../options/resolved-options';
import { Job } from '../entities/job.entity';
import { runKey } from './running-job';
import { RunRef } from './running-jobs';

/**
 * How long after its last renewal was sent a held job may still start: `staleAfterMs -
 * heartbeatIntervalMs`, so that a job started at the last moment still has a whole heartbeat
 * interval of lease left for the next renewal. At least half of `staleAfterMs`: with a
 * heartbeat interval of more than half the lease (allowed, if unusual) the margin would shrink
 * towards nothing, below a claim's own round trip, and no claimed job could ever start.
 */
export function leaseWindowMs(staleAfterMs: number, heartbeatIntervalMs: number): number {
  return Math.max(staleAfterMs - heartbeatIntervalMs, staleAfterMs / 2);
}

/** Held jobs `next()` would not start, by why. */
export interface RefusedJobs {
  leaseLapsed: Job[];
  paused: Job[];
}

/** A job waiting here, when it was claimed and when its lease was last renewed (`performance.now()`, ms). */
interface HeldJob {
  job: Job;
  key: string;
  heldSince: number;
  leaseRenewedAt: number;
}

/**
 * Jobs claimed and not started yet, waiting in this process for a slot, best first: by priority,
 * and in the order they were claimed within one (a later claim's better job goes ahead of the
 * worse ones held): those claimed ahead of free slots (`worker.prefetch`), and for a moment
 * every claimed job on its way to its slot. Each is claimed like any other (running, leased to
 * this worker, its attempt counted): the heartbeat renews their leases, a cancel or a lost lease
 * drops them, and shutdown hands them back with the rest of what the worker holds.
 *
 * `next()` is the one way out to a slot, and the one check: a job starts only while its lease is
 * current, i.e. the claim or the last heartbeat that renewed it was SENT less than
 * `leaseWindowMs` (`staleAfterMs - heartbeatIntervalMs`) ago by a monotonic clock. Past that, another node's reaper
 * may have taken it back already (it does at `staleAfterMs` by the database's clock), and the job
 * may be running there: starting it here would run its handler twice. A blocked event loop, a
 * database outage or a starved pool all end up here, and nothing on the way can tell.
 */
@Injectable()
export class PrefetchedJobs {
  private jobs: HeldJob[] = [];
  private readonly perType = new Map<string, number>();
  /** Types being paused on this node: none of their jobs starts (see `JobPoller.dropPaused`). */
  private readonly pausing = new Map<string, number>();
  private readonly leaseWindowMs: number;

  constructor(@Inject(RESOLVED_JOB_QUEUE_OPTIONS) options: ResolvedJobQueueOptions) {
    this.leaseWindowMs = leaseWindowMs(options.staleAfterMs, options.heartbeatIntervalMs);
  }

  get size(): number {
    return this.jobs.length;
  }

  countOf(jobType: string): number {
    return this.perType.get(jobType) ?? 0;
  }

  /** Every job held, as (job id, token), for the heartbeat. */
  runs(): RunRef[] {
    return this.jobs.map(({ job }) => ({ id: job.id, token: job.runToken }));
  }

  /** Holds `job`, claimed by a statement sent at `claimSentAt` (`performance.now()`). */
  push(job: Job, claimSentAt: number): void {
    this.holdClaimed([], [job], claimSentAt);
  }

  /**
   * Holds a claim's jobs, claimed by a statement sent at `claimSentAt`: `first` ahead of every
   * job held (they are to start now), `rest` (best first, as the claim returns them) merged
   * into what is held by priority, after the held jobs of the same priority.
   */
  holdClaimed(first: readonly Job[], rest: readonly Job[], claimSentAt: number): void {
    const hold = (job: Job): HeldJob => {
      this.count(job.jobType, 1);
      return {
        job,
        key: runKey(job.id, job.runToken),
        heldSince: claimSentAt,
        leaseRenewedAt: claimSentAt,
      };
    };
    const merged: HeldJob[] = first.map(hold);
    let i = 0;
    for (const job of rest) {
      while (i < this.jobs.length && this.jobs[i].job.priority >= job.priority) {
        merged.push(this.jobs[i++]);
      }
      merged.push(hold(job));
    }
    while (i < this.jobs.length) merged.push(this.jobs[i++]);
    this.jobs = merged;
  }

  /**
   * Takes out the best job held that may start now (see the class). Held jobs ahead of it
   * that may not are taken out too and added to `refused`, for the caller to hand back. Any
   * job may start in a free slot: a claim never takes more of a type with a limit of its own
   * than that limit minus what runs or waits here already.
   */
  next(refused: RefusedJobs, now = performance.now()): Job | undefined {
    for (let held = this.jobs.shift(); held; held = this.jobs.shift()) {
      this.count(held.job.jobType, -1);
      if (now - held.leaseRenewedAt >= this.leaseWindowMs) refused.leaseLapsed.push(held.job);
      else if (this.pausing.has(held.job.jobType)) refused.paused.push(held.job);
      else return held.job;
    }
    return undefined;
  }

  /**
   * The heartbeat sent at `sentAt` renewed the leases of these runs (`runKey`s): a job renewed
   * may start until `sentAt + staleAfterMs - heartbeatIntervalMs`.
   */
  renewed(heldRuns: ReadonlySet<string>, sentAt: number): void {
    for (const held of this.jobs) {
      if (heldRuns.has(held.key)) held.leaseRenewedAt = Math.max(held.leaseRenewedAt, sentAt);
    }
  }

  /**
   * Drops these runs (cancelled, or their lease lost) so that they never start; returns the ids
   * of the jobs it dropped (runs not held here are ignored).
   */
  dropRuns(runs: readonly RunRef[]): string[] {
    if (runs.length === 0) return [];
    const doomed = new Set(runs.map((run) => runKey(run.id, run.token)));
    return this.dropWhere((held) => doomed.has(held.key)).map((job) => job.id);
  }

  /** The job types of the held runs among `runKeys`. */
  typesOf(runKeys: ReadonlySet<string>): Set<string> {
    const types = new Set<string>();
    if (runKeys.size === 0) return types;
    for (const held of this.jobs) if (runKeys.has(held.key)) types.add(held.job.jobType);
    return types;
  }

  /**
   * Takes out the jobs held longer than `holdLimitMs` of their type allows and returns them, to
   * hand back: a worker whose slots are busy does not sit on jobs another could run.
   */
  takeOverdue(holdLimitMs: (jobType: string) => number, now = performance.now()): Job[] {
    if (this.jobs.length === 0) return [];
    return this.dropWhere((held) => now - held.heldSince >= holdLimitMs(held.job.jobType));
  }

  /** When the first held job becomes overdue (`performance.now()`, ms); `undefined`: none held. */
  firstOverdueAt(holdLimitMs: (jobType: string) => number): number | undefined {
    let first: number | undefined;
    for (const held of this.jobs) {
      const at = held.heldSince + holdLimitMs(held.job.jobType);
      if (first === undefined || at < first) first = at;
    }
    return first;
  }

  /** Drops every held job of `jobType` (paused) and returns them, to hand back. */
  dropType(jobType: string): Job[] {
    if (this.countOf(jobType) === 0) return [];
    return this.dropWhere((held) => held.job.jobType === jobType);
  }

  /**
   * While a pause of `jobType` is being carried out here, no held job of that type starts: those
   * that `next()` meets are refused. Returns the function that ends it. Pauses of one type may
   * overlap; the type starts again once every one has ended.
   */
  holdBack(jobType: string): () => void {
    this.pausing.set(jobType, (this.pausing.get(jobType) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.pausing.get(jobType) ?? 1) - 1;
      if (left > 0) this.pausing.set(jobType, left);
      else this.pausing.delete(jobType);
    };
  }

  /** Empties the buffer (the worker stops; what was held is handed back by the worker). */
  clear(): void {
    this.jobs = [];
    this.perType.clear();
  }

  private dropWhere(doomed: (held: HeldJob) => boolean): Job[] {
    const dropped: Job[] = [];
    this.jobs = this.jobs.filter((held) => {
      if (!doomed(held)) return true;
      this.count(held.job.jobType, -1);
      dropped.push(held.job);
      return false;
    });
    return dropped;
  }

  private count(jobType: string, delta: number): void {
    this.perType.set(jobType, this.countOf(jobType) + delta);
  }
}
