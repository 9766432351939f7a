import { Inject, Injectable, Logger } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { performance } from 'node:perf_hooks';
import { DataSource } from 'typeorm';
import {
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions, ResolvedWorkerOptions } from '../options/resolved-options';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { withQueryRunner } from '../sql/with-query-runner';
import { claimAndStartJobs } from '../sql/claim-job-batch.query';
import { releaseRuns } from '../sql/release-jobs.query';
import { Job } from '../entities/job.entity';
import { JobExecutor } from './job-executor';
import { RunningJobs } from './running-jobs';
import { PrefetchedJobs, RefusedJobs } from './prefetched-jobs';
import { FailureBackoff } from '../periodic/failure-backoff';
import { ClaimWakeup } from '../periodic/claim-wakeup';
import { ClaimPolicy, claimPolicyOf } from './claim-policy';
import { LogPeriod } from '../periodic/log-period';
import { ScheduledTask } from '../periodic/scheduled-task';
import { NotifyCooldown } from './notify-cooldown';
import { JobTypePauses } from './job-type-pauses';
import { databaseErrorText } from '../errors/database-error.util';
import { ClaimCursors } from './claim-cursors';
import { RateWindowWakeup } from './rate-window-wakeup';
import { HoardedJobsWatch } from './hoarded-jobs-watch';
import { RunTimes } from './run-times';
import { PrefetchSize } from './prefetch-size';

/**
 * Claims jobs into free slots and hands them to the executor. Woken by its interval (registered
 * in the queue's SchedulerRegistry), by LISTEN, and by a freed slot after a claim that found more
 * work than it could take; polls never overlap (a wake during a poll runs one more poll after it).
 *
 * With `worker.prefetch`, a claim also takes up to that many jobs more than the free slots; they
 * wait in `PrefetchedJobs` and start, best first, as slots free, each only while its lease is
 * current; the next claim goes out once half of them have started. Held jobs that may not start
 * (their lease lapsed, their type paused) are handed back, their attempt given back, and so are
 * those that waited longer than their `holdLimitMs` for a slot (`HoardedJobsWatch`).
 *
 * One claim per poll, across every type in one priority order (priority DESC, created_at, id):
 * a type at its own `concurrency` limit is left out of that claim (it neither jumps the queue nor
 * holds a slot it may not use), and a type with a free slot whose next job is the best one due
 * gets it at this poll, whatever other types have waiting. Each claim resumes every type and
 * priority where this worker's last claim of it ended (`ClaimCursors`), and reads from the heads
 * now and then, and when a notification says jobs were made pending behind the cursors.
 */
@Injectable()
export class JobPoller {
  private readonly logger = new Logger('JobQueue');
  private readonly backoff = new FailureBackoff();
  private readonly outageLog = new LogPeriod();
  /** Set while a failed poll waits for its retry: other wakes (interval, LISTEN) are ignored. */
  private retryTimer: NodeJS.Timeout | undefined;
  /** Made at the first start: its period is a worker option, and `worker: false` has none. */
  private interval: ScheduledTask | undefined;
  private jobTypes: string[] = [];
  /** Each type's own `concurrency` (`undefined`: none), in `jobTypes` order. */
  private typeLimits: Array<number | undefined> = [];
  private claimPolicy: ClaimPolicy | undefined;
  /** Types at their own limit at the last poll: a slot of theirs freeing wakes the poller. */
  private typesAtLimit = new Set<string>();
  /** The types with a `rateLimit`: their windows are watched (`watchRateWindows`). */
  private rateLimitedTypes = new Set<string>();
  /**
   * The types never held ahead of a slot, claimed only into free ones: the rate-limited (a held
   * job would start outside the window its claim counted it in) and the ordered (a held job
   * would hold its key's turn without running).
   */
  private neverHeldTypes = new Set<string>();
  /** The last poll had no free slot for a never-held type: any slot freeing wakes the poller. */
  private unheldWaitForSlot = false;
  private rateWindows: RateWindowWakeup | undefined;

  private stopped = true;
  private polling: Promise<void> | undefined;
  private pollAgain = false;
  private wakeScheduled = false;
  private readonly notifyCooldown = new NotifyCooldown();
  /** A notified poll waiting out the cooldown; later notifications join it. */
  private notifyTimer: NodeJS.Timeout | undefined;
  /** A notification arrived during the poll under way: it may be for a job that poll missed. */
  private notifiedAgain = false;
  /** The last poll filled every slot it could: there is probably more waiting. */
  private saturated = false;
  /**
   * When a poll last finished (Date.now() ms), whatever it found or however it failed, or when
   * the poller started; the health indicator reads it: a worker whose loop stopped (a blocked
   * event loop, a bug, a first claim that never returns) stops moving it.
   */
  lastPollAt: number | undefined;
  /** Hand-backs of paused types' held jobs under way, by type (see `dropPaused`). */
  private readonly pauseDrops = new Map<string, Promise<unknown>>();
  /** Ends this poller's hold on `QueueService.pause()` of this process (see `JobTypePauses`). */
  private stopListeningToPauses: (() => void) | undefined;
  private stopListeningToWakeups: (() => void) | undefined;
  private readonly cursors = new ClaimCursors();
  /** Hands back held jobs that waited too long for a slot (see `HoardedJobsWatch`). */
  private readonly hoarded: HoardedJobsWatch;
  /** Held jobs were handed back for want of a slot: claim none ahead of slots until one frees. */
  private slotsBusy = false;
  /** How many jobs a claim may take ahead of the free slots (`worker.prefetch`). */
  private prefetchSize: PrefetchSize | undefined;

  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    private readonly registry: JobHandlerRegistry,
    private readonly running: RunningJobs,
    private readonly prefetched: PrefetchedJobs,
    private readonly executor: JobExecutor,
    @Inject(JOB_QUEUE_SCHEDULER) private readonly schedulerRegistry: SchedulerRegistry,
    private readonly pauses: JobTypePauses,
    private readonly wakeup: ClaimWakeup,
    private readonly runTimes: RunTimes,
  ) {
    this.hoarded = new HoardedJobsWatch(
      prefetched,
      runTimes,
      (jobs, why) => this.handBack(jobs, why),
      () => (this.slotsBusy = true),
    );
  }

  private get worker(): ResolvedWorkerOptions {
    return this.options.worker as ResolvedWorkerOptions;
  }

  start(jobTypes: string[]): void {
    this.jobTypes = jobTypes;
    const handlers = jobTypes.map((jobType) => this.registry.get(jobType)?.options);
    this.typeLimits = handlers.map((options) => options?.concurrency);
    this.rateLimitedTypes = new Set(
      jobTypes.filter((jobType) => this.registry.rateLimited(jobType)),
    );
    this.neverHeldTypes = new Set([
      ...this.rateLimitedTypes,
      ...jobTypes.filter((jobType) => this.registry.get(jobType)?.options.limits.ordered),
    ]);
    this.rateWindows ??= new RateWindowWakeup(
      this.dataSource,
      this.options.schema,
      this.worker.pollIntervalMs,
      () => this.wake(),
    );
    this.claimPolicy = claimPolicyOf(jobTypes, this.registry, this.options);
    this.prefetchSize ??= new PrefetchSize(
      this.worker.prefetch,
      this.worker.concurrency,
      this.runTimes,
    );
    this.stopped = false;
    // The stall clock starts here, not at the first poll's end: a first poll that never ends
    // shows as a stall too.
    this.lastPollAt = Date.now();
    this.stopListeningToPauses = this.pauses.listen((jobType) => this.dropPaused(jobType));
    this.stopListeningToWakeups = this.wakeup.listen(() => this.wake());
    this.executor.onSlotFreed = (jobType) => {
      if (this.stopped) return;
      this.slotsBusy = false;
      this.startPrefetched();
      if (this.prefetched.size > this.prefetchJobs() / 2) return;
      if (this.saturated || this.unheldWaitForSlot || this.typesAtLimit.has(jobType)) this.wake();
    };
    this.interval ??= new ScheduledTask(
      this.schedulerRegistry,
      `job-queue:poll:${this.options.workerId}`,
      this.worker.pollIntervalMs,
      async () => this.wake(),
      () => undefined, // wake() does not throw: a failed poll is logged where it fails
    );
    this.interval.start();
    this.wake();
  }

  /** Stops claiming; resolves once a poll under way has handed its jobs to the executor. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.stopListeningToPauses?.();
    this.stopListeningToPauses = undefined;
    this.stopListeningToWakeups?.();
    this.stopListeningToWakeups = undefined;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearTimeout(this.notifyTimer);
    this.notifyTimer = undefined;
    this.rateWindows?.cancel();
    this.hoarded.cancel();
    await this.interval?.stop();
    await this.polling;
    // Not started, and never will be: the worker hands them back with the rest it holds.
    this.prefetched.clear();
  }

  /**
   * `jobType` was paused (here, by notification, or as the heartbeat learnt): hands back every
   * held job of that type, so none of them starts after the pause reached this node. A claim
   * under way may have been sent before the pause committed and bring more of them: this waits
   * for it, and nothing of the type starts meanwhile. Resolves once they are handed back (or
   * the hand-back failed and was logged), and once every drop of the type under way here has
   * (the pause's own notification may have begun one first, which took the jobs).
   */
  async dropPaused(jobType: string): Promise<void> {
    // Each drop includes the one before it, so awaiting the newest awaits them all.
    const drop = Promise.all([this.pauseDrops.get(jobType), this.handBackHeldOf(jobType)]);
    this.pauseDrops.set(jobType, drop);
    try {
      await drop;
    } finally {
      if (this.pauseDrops.get(jobType) === drop) this.pauseDrops.delete(jobType);
    }
  }

  private async handBackHeldOf(jobType: string): Promise<void> {
    const release = this.prefetched.holdBack(jobType);
    try {
      const dropped = this.prefetched.dropType(jobType);
      await this.polling;
      dropped.push(...this.prefetched.dropType(jobType));
      await this.handBack(dropped, `job type ${jobType} is paused`);
    } finally {
      release();
    }
  }

  /**
   * New jobs were inserted (LISTEN): poll at once, without waiting for the next turn of the event
   * loop; idle-worker latency is what this path is for. Notifications during a poll make one
   * more poll after it. After a notified poll that found nothing, notifications wait out the
   * `NotifyCooldown` and share one poll: anyone may NOTIFY, and a flood must not become a busy
   * loop of claims. Cancel notifications never come here. `behind`: the jobs were made pending
   * with an old place in the queue (staged, handed back, resumed), or some may have been missed
   * (LISTEN reconnected): the next claim reads from the heads.
   */
  jobsInserted(behind = false): void {
    if (behind) this.cursors.rescanSoon();
    if (this.stopped || this.notifyTimer) return;
    if (this.polling) {
      this.notifiedAgain = true;
      return;
    }
    const waitMs = this.notifyCooldown.waitMs();
    if (waitMs === 0) {
      this.pollSoon(true);
      return;
    }
    this.notifyTimer = setTimeout(() => {
      this.notifyTimer = undefined;
      this.pollSoon(true);
    }, waitMs);
  }

  /** Asks for a poll soon; many wakes in one tick of the event loop make one poll. */
  wake(): void {
    if (this.stopped || this.wakeScheduled) return;
    this.wakeScheduled = true;
    setImmediate(() => {
      this.wakeScheduled = false;
      this.pollSoon();
    });
  }

  /** Polls now, or once the poll under way is done. `notified`: a notification asks for it. */
  private pollSoon(notified = false): void {
    // During an outage only the back-off timer polls: a short pollIntervalMs must not turn
    // into a connection attempt every few ms against a database that is down.
    if (this.stopped || this.retryTimer) return;
    if (this.polling) {
      if (notified) this.notifiedAgain = true;
      else this.pollAgain = true;
      return;
    }
    const startedAt = Date.now();
    this.polling = this.claim()
      .then((sent) => {
        const claimed = sent ?? 0;
        if (notified && sent !== undefined) this.notifyCooldown.polled(claimed, startedAt);
        if (this.backoff.failing) {
          this.logger.log(
            `Database reachable again after ${this.backoff.failures} failed claim(s); ` +
              `claimed ${claimed} job(s)`,
          );
        }
        this.backoff.succeeded();
        this.outageLog.reset();
      })
      .catch((error: unknown) => {
        this.backoff.failed();
        if (this.outageLog.due()) {
          this.logger.error(
            `Could not claim jobs (${this.backoff.failures} failure(s) in a row, retrying ` +
              `every ${this.backoff.delayMs} ms): ${databaseErrorText(error)}`,
          );
        }
      })
      .finally(() => {
        this.polling = undefined;
        this.lastPollAt = Date.now();
        const again = this.pollAgain;
        const notifiedAgain = this.notifiedAgain;
        this.pollAgain = false;
        this.notifiedAgain = false;
        if (this.backoff.failing) {
          this.retryTimer = setTimeout(() => {
            this.retryTimer = undefined;
            this.wake();
          }, this.backoff.delayMs).unref();
        } else if (again) this.wake();
        else if (notifiedAgain) this.jobsInserted();
      });
  }

  /** Claims as many jobs as there are free slots and starts them. Returns how many. */
  async pollOnce(): Promise<number> {
    return (await this.claim()) ?? 0;
  }

  /** `pollOnce`, telling "no claim was sent" (`undefined`: no free slot) from "none found" (0). */
  private async claim(): Promise<number | undefined> {
    const limit = this.freeSlots();
    if (this.stopped || !this.claimPolicy) return undefined;
    // More work may be waiting when the claim came back full, or was not even tried for lack
    // of slots; the next freed slot then polls again (and learns if it was wrong).
    if (limit <= 0) {
      this.saturated = true;
      return undefined;
    }
    this.typesAtLimit = new Set();
    // A rate-limited or ordered job is never held (see `neverHeldTypes`).
    const freeNow = Math.max(0, this.worker.concurrency - this.running.size - this.prefetched.size);
    this.unheldWaitForSlot = false;
    const caps = this.jobTypes.map((jobType, i) => {
      const typeLimit = this.typeLimits[i];
      let free: number | null = null;
      if (typeLimit !== undefined) {
        const held = this.running.countOf(jobType) + this.prefetched.countOf(jobType);
        free = Math.max(0, typeLimit - held);
        if (free === 0) this.typesAtLimit.add(jobType);
      }
      if (!this.neverHeldTypes.has(jobType)) return free;
      if (freeNow === 0 && free !== 0) this.unheldWaitForSlot = true;
      return Math.min(free ?? freeNow, freeNow);
    });
    if (this.typesAtLimit.size === this.jobTypes.length) {
      this.saturated = false;
      return undefined;
    }
    const sentAt = performance.now(); // the leases of what it claims start no later than this
    const after = this.cursors.forClaim();
    let claimed;
    try {
      claimed = await withQueryRunner(this.dataSource, (queryRunner) =>
        claimAndStartJobs(
          queryRunner,
          this.options.schema,
          this.options.workerId,
          { ...this.claimPolicy!, caps },
          limit,
          after,
          this.options.events.remote,
        ),
      );
    } catch (error) {
      this.cursors.rescanSoon(); // it may have been the claim from the heads
      throw error;
    }
    this.prefetchSize?.claimTook(performance.now() - sentAt);
    this.cursors.advance(claimed.ends);
    const { jobs } = claimed;
    this.watchRateWindows(caps, jobs);
    // Best first: the new jobs go in by priority among those held, but for the never-held
    // ones, which go first: the claim took no more of them than there were free slots beside
    // what is held, and a better job of this claim that started before them would leave one held.
    const startFirst = jobs.filter((job) => this.neverHeldTypes.has(job.jobType));
    const rest =
      startFirst.length === 0 ? jobs : jobs.filter((job) => !this.neverHeldTypes.has(job.jobType));
    this.prefetched.holdClaimed(startFirst, rest, sentAt);
    this.startPrefetched();
    this.hoarded.arm();
    this.saturated = jobs.length === limit;
    return jobs.length;
  }

  /**
   * Starts held jobs into the free slots, best first, each only if it may start
   * now (`PrefetchedJobs.next`); the others are handed back.
   */
  private startPrefetched(): void {
    const refused: RefusedJobs = { leaseLapsed: [], paused: [] };
    while (this.running.size < this.worker.concurrency) {
      const job = this.prefetched.next(refused);
      if (!job) break;
      this.executor.start(job);
    }
    // Called as each slot frees: an async call with nothing to hand back would still cost a job
    // its promise.
    if (refused.leaseLapsed.length > 0) {
      void this.handBack(refused.leaseLapsed, 'their lease lapsed before a slot was free');
    }
    if (refused.paused.length > 0) void this.handBack(refused.paused, 'their type is paused');
  }

  /**
   * Hands back held jobs that will not start here, as shutdown does, each only while this run
   * still holds it; another node may have taken it back already. A failure is logged: the
   * reaper takes them back after `staleAfterMs`.
   */
  private async handBack(jobs: Job[], why: string): Promise<void> {
    if (jobs.length === 0) return;
    const runs = jobs.map((job) => ({ id: job.id, token: job.runToken }));
    try {
      const released = await releaseRuns(
        this.dataSource,
        this.options.schema,
        this.options.workerId,
        runs,
      );
      this.cursors.rescanSoon(); // they are behind the cursors now
      const gone = jobs.length - released.length;
      this.logger.log(
        `Handed ${released.length} held job(s) back unstarted: ${why}` +
          (gone > 0 ? ` (${gone} more had been taken back already)` : ''),
      );
    } catch (error) {
      this.logger.warn(
        `Could not hand ${jobs.length} held job(s) back (${why}): ${databaseErrorText(error)}; ` +
          'they return to the queue after staleAfterMs',
      );
    }
  }

  /**
   * After a claim that took fewer rate-limited jobs than it had room for (a window may be full),
   * has the poller woken when the next window of those types opens.
   */
  private watchRateWindows(caps: Array<number | null>, jobs: Job[]): void {
    const rateTypes: string[] = [];
    let room = 0;
    this.jobTypes.forEach((jobType, i) => {
      const cap = caps[i] ?? 0;
      if (!this.rateLimitedTypes.has(jobType) || cap === 0) return;
      rateTypes.push(jobType);
      room += cap;
    });
    if (rateTypes.length === 0) return;
    const taken = jobs.filter((job) => rateTypes.includes(job.jobType)).length;
    if (taken < room) void this.rateWindows?.afterClaim(rateTypes);
  }

  private prefetchJobs(): number {
    return this.prefetchSize?.jobs ?? 0;
  }

  /**
   * Jobs the next claim may take: the free slots (at most `batchSize`) plus prefetch room, none
   * of it while held jobs were handed back for want of a slot and none has freed since.
   */
  private freeSlots(): number {
    const { concurrency, batchSize } = this.worker;
    const prefetch = this.slotsBusy ? 0 : this.prefetchJobs();
    const held = this.running.size + this.prefetched.size;
    return Math.min(concurrency + prefetch - held, batchSize + prefetch);
  }
}
