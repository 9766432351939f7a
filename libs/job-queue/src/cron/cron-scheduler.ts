import { Injectable } from '@nestjs/common';
import { CRON_TICK_MS } from '../job-queue.constants';
import { CatchUp } from '../interfaces/schedule-options.interface';
import { CronSpec, CronTimes, cronTimes } from './cron-expression';
import { FirePlan, MAX_BEHIND_MS, planFires } from './fire-plan';
import { HandlerScheduleSync, ScheduledHandler, syncHandlerSchedules } from './handler-schedules';
import {
  DUE_SCHEDULES_LIMIT,
  DueScheduleRow,
  dueSchedules,
  FIRST_DUE_PAGE,
} from './sql/due-schedules.query';
import { endCronTick } from './sql/end-cron-tick.query';
import { fireSchedule } from './sql/fire-schedule.query';
import { CronTickClock, startCronTick } from './sql/start-cron-tick.query';
import { ClaimWakeup } from '../periodic/claim-wakeup';
import { LogPeriod } from '../periodic/log-period';
import { KeyedLogPeriod } from '../periodic/keyed-log-period';
import { LateFires } from './late-fires';
import { MaintenanceContext, MaintenanceTask } from '../periodic/maintenance-task';
import { JobQueueInstruments } from '../instrumentation/job-queue-instruments';

/**
 * How often a node says again that it cannot plan a schedule, per schedule: the first at once,
 * then once a minute while it lasts (a fleet of such nodes would otherwise say it every second).
 */
export const PLAN_REFUSED_LOG_PERIOD_MS = 60_000;

/** What one tick did for a schedule it advanced. */
export interface FiredSchedule {
  name: string;
  /** The fire times it enqueued a job for (none: missed and skipped). */
  fireTimes: Date[];
  jobIds: string[];
  nextFireAt: Date | null;
}

/**
 * Fires the cron schedules (`job_schedules`) on every worker node: every `CRON_TICK_MS` it reads
 * the schedules that are due, plans each one's jobs with croner (`planFires`), and moves each
 * schedule on in one statement with its jobs, only if no other node did first (`fireSchedule`).
 * PostgreSQL decides which node fires a fire time; no node is a leader, and a node that dies
 * mid-tick leaves each schedule either fired or not. Every fire time is planned on the database's
 * clock, and a fire time counts as missed only when no node ticked after it came
 * (`job_schedule_ticks`). At start it writes this node's handler schedules
 * (`syncHandlerSchedules`).
 */
@Injectable()
export class CronScheduler extends MaintenanceTask {
  /** Ticks whose fire times were late, for one warning per log period while it lasts. */
  private readonly latePeriod = new LogPeriod();
  /** The schedules this node could not plan, for one warning per period each. */
  private readonly refusals = new KeyedLogPeriod(PLAN_REFUSED_LOG_PERIOD_MS);

  constructor(
    context: MaintenanceContext,
    private readonly wakeup: ClaimWakeup,
    private readonly instruments: JobQueueInstruments,
  ) {
    super(context, {
      kind: 'cron',
      periodMs: () => CRON_TICK_MS,
      failure: 'Firing cron schedules failed',
    });
  }

  protected runOnce(): Promise<unknown> {
    return this.tickOnce();
  }

  /** Writes the schedules of this node's handlers (see `syncHandlerSchedules`). */
  syncHandlerSchedules(handlers: readonly ScheduledHandler[]): Promise<HandlerScheduleSync> {
    return syncHandlerSchedules(this.dataSource, this.options.schema, handlers);
  }

  /**
   * One tick: fires every schedule due by `now` (default: the database's now(), read once for
   * the whole tick), in pages of `DUE_SCHEDULES_LIMIT` in (next_fire_at, name) order until a short
   * page; returns those this node advanced (a schedule another node fired first, or one this node
   * cannot plan, is not among them). Workers are woken after each page that enqueued jobs. The
   * tick records its start and its end in `job_schedule_ticks`, so that the fire times that come
   * while it runs count as late at the next tick, not as missed (see `planFires`).
   */
  async tickOnce(now: Date | null = null): Promise<FiredSchedule[]> {
    const clock = await startCronTick(this.dataSource, this.options.schema, now);
    this.refusals.prune(clock.now.getTime());
    const fired: FiredSchedule[] = [];
    const late = new LateFires();
    let cursor = FIRST_DUE_PAGE;
    for (;;) {
      const page = await dueSchedules(this.dataSource, this.options.schema, clock.now, cursor);
      let enqueued = false;
      for (const due of page) {
        const schedule = await this.fire(due, clock, late);
        if (!schedule) continue;
        fired.push(schedule);
        enqueued ||= schedule.jobIds.length > 0;
      }
      if (enqueued) this.wakeup.jobsClaimable();
      if (page.length < DUE_SCHEDULES_LIMIT) break;
      const last = page[page.length - 1];
      cursor = { position: last.position, name: last.name };
    }
    await endCronTick(this.dataSource, this.options.schema, clock);
    this.logLate(late, clock.now);
    return fired;
  }

  /**
   * Plans and fires one due schedule; `undefined` when another node got there first, or when
   * this node cannot plan it (then it writes nothing: see `plan`).
   */
  private async fire(
    due: DueScheduleRow,
    clock: CronTickClock,
    late: LateFires,
  ): Promise<FiredSchedule | undefined> {
    const plan = this.plan(due, clock);
    if (!plan) return undefined;
    // The instruments see a fire as an enqueue of its jobs: counted, and traced from here on.
    const jobs = await this.instruments.enqueue(
      plan.fireTimes.map(() => due.job_type),
      (metaJson) =>
        fireSchedule(this.dataSource, this.options.schema, {
          name: due.name,
          cron: due.cron,
          timezone: due.timezone,
          catchUp: due.catch_up,
          readNextFireAt: due.next_fire_at,
          ...plan,
          metaJson,
        }),
      (fired) => fired ?? [],
    );
    if (!jobs) return undefined; // another node (or a schedule() call) got there first
    const jobIds = jobs.map((job) => job.id);
    if (plan.missedSince) this.logMissed(due, plan);
    late.add(due.name, plan.late);
    return { name: due.name, jobIds, fireTimes: plan.fireTimes, nextFireAt: plan.nextFireAt };
  }

  /**
   * The plan of a due schedule, or `undefined` when this node's croner cannot read it: a zone
   * its Intl does not know (older ICU or tzdata), an expression an older croner refuses during a
   * rolling deploy, a row edited by hand. The row was checked when written, so another node may
   * well plan it: this one writes nothing to it (a NULL would stop it for every node) and says so
   * once per `PLAN_REFUSED_LOG_PERIOD_MS` for that schedule.
   */
  private plan(due: DueScheduleRow, clock: CronTickClock): FirePlan | undefined {
    let plan: FirePlan;
    try {
      const catchUp = due.catch_up as CatchUp;
      plan = planFires(this.times(due), due.next_fire_at, catchUp, clock.now, clock.tickingSince);
    } catch (error) {
      if (this.refusals.due(due.name, clock.now.getTime())) {
        this.logger.warn(
          `Schedule "${due.name}" not fired by this worker: its cron "${due.cron}" ` +
            `(${due.timezone}) cannot be planned here (${(error as Error).message}); left to ` +
            `workers that can. If none can, write it again with schedule().`,
        );
      }
      return undefined;
    }
    this.refusals.clear(due.name);
    return plan;
  }

  /** A schedule's fire times, as this node's croner computes them (tests refuse some here). */
  private times(spec: CronSpec): CronTimes {
    return cronTimes(spec);
  }

  /**
   * Fire times that got no job of their own: every worker was down or stalled when they came, or
   * (rarely) workers ticked but none fired the schedule for over `MAX_BEHIND_MS`.
   */
  private logMissed(due: DueScheduleRow, plan: FirePlan): void {
    const outcome =
      plan.fireTimes.length === 0
        ? 'skipped them'
        : `enqueued ${plan.fireTimes.length} job(s), from ${plan.fireTimes[0].toISOString()}`;
    const cause = plan.missedWhileTicking
      ? `: workers ticked, but none fired it for over ${MAX_BEHIND_MS / 60_000} minutes`
      : ' while no worker ticked';
    this.logger.warn(
      `Schedule "${due.name}" missed fire times from ${plan.missedSince!.toISOString()}${cause}: ` +
        `${outcome} (catchUp: ${due.catch_up})`,
    );
  }

  /**
   * Fire times enqueued later than their lateness, each with its own job, because workers ticked
   * after they came (a long tick, or ticks that fell behind): one line for the whole tick, once
   * per log period while it lasts.
   */
  private logLate(late: LateFires, now: Date): void {
    if (!late.oldest) {
      this.latePeriod.reset();
      return;
    }
    if (!this.latePeriod.due(now.getTime())) return;
    const { name, fireAt } = late.oldest;
    this.logger.warn(
      `Cron ticks fell behind: ${late.count} fire time(s) of ${late.schedules} schedule(s) ` +
        `enqueued late, the oldest ${now.getTime() - fireAt.getTime()} ms after it came ` +
        `(schedule "${name}", ${fireAt.toISOString()}). Workers ticked after each came, so ` +
        `none was missed: each got its own job.`,
    );
  }
}
