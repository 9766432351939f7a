import { Inject, Injectable } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { DataSource } from 'typeorm';
import {
  CRON_TICK_MS,
  JOB_QUEUE_DATA_SOURCE,
  JOB_QUEUE_SCHEDULER,
  RESOLVED_JOB_QUEUE_OPTIONS,
} from '../job-queue.constants';
import { ResolvedJobQueueOptions } from '../job-queue.options';
import { JobHandlerRegistry } from '../discovery/job-handler.registry';
import { CatchUp, cronTimes } from '../schedules/cron-expression';
import { FirePlan, planFires } from '../schedules/fire-plan';
import { HandlerScheduleSync, syncHandlerSchedules } from '../schedules/handler-schedules';
import { DueScheduleRow, dueSchedules } from '../sql/due-schedules.query';
import { fireSchedule } from '../sql/fire-schedule.query';
import { JobPoller } from '../worker/job-poller';
import { MaintenanceTask } from './maintenance-task';

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
 * mid-tick leaves each schedule either fired or not. At start it writes this node's handler
 * schedules (`syncHandlerSchedules`).
 */
@Injectable()
export class CronScheduler extends MaintenanceTask {
  constructor(
    @Inject(JOB_QUEUE_DATA_SOURCE) private readonly dataSource: DataSource,
    @Inject(RESOLVED_JOB_QUEUE_OPTIONS) private readonly options: ResolvedJobQueueOptions,
    @Inject(JOB_QUEUE_SCHEDULER) schedulerRegistry: SchedulerRegistry,
    private readonly registry: JobHandlerRegistry,
    private readonly poller: JobPoller,
  ) {
    super(schedulerRegistry, {
      kind: 'cron',
      workerId: options.workerId,
      periodMs: CRON_TICK_MS,
      failure: 'Firing cron schedules failed',
    });
  }

  protected runOnce(): Promise<unknown> {
    return this.tickOnce();
  }

  /** Writes this node's handler schedules (see `syncHandlerSchedules`). */
  syncHandlerSchedules(): Promise<HandlerScheduleSync> {
    return syncHandlerSchedules(this.dataSource, this.options.schema, this.registry.all());
  }

  /**
   * One tick: fires the schedules due by `now` (default: the database's now()); returns those
   * this node advanced (a schedule another node fired first is not among them).
   */
  async tickOnce(now: Date | null = null): Promise<FiredSchedule[]> {
    const fired: FiredSchedule[] = [];
    for (const due of await dueSchedules(this.dataSource, this.options.schema, now)) {
      const plan = this.plan(due);
      const jobIds = await fireSchedule(this.dataSource, this.options.schema, {
        name: due.name,
        cron: due.cron,
        timezone: due.timezone,
        catchUp: due.catch_up,
        readNextFireAt: due.next_fire_at,
        ...plan,
      });
      if (!jobIds) continue; // another node (or a schedule() call) got there first
      fired.push({
        name: due.name,
        jobIds,
        fireTimes: plan.fireTimes,
        nextFireAt: plan.nextFireAt,
      });
      if (plan.missedSince) this.logMissed(due, plan);
    }
    if (fired.some((schedule) => schedule.jobIds.length > 0)) this.poller.wake();
    return fired;
  }

  /**
   * A row's expression was checked when written; one croner cannot read now (edited by hand)
   * stops firing, with a warning, until `schedule()` or a handler's boot writes it again.
   */
  private plan(due: DueScheduleRow): FirePlan {
    try {
      return planFires(cronTimes(due), due.next_fire_at, due.catch_up as CatchUp, due.now);
    } catch (error) {
      this.logger.warn(
        `Schedule "${due.name}" stopped: its cron "${due.cron}" (${due.timezone}) cannot be ` +
          `read (${(error as Error).message}); write it again with schedule()`,
      );
      return { fireTimes: [], nextFireAt: null, missedSince: null };
    }
  }

  /** Fire times no worker enqueued in time: every node was down (or far behind). */
  private logMissed(due: DueScheduleRow, plan: FirePlan): void {
    const outcome =
      plan.fireTimes.length === 0
        ? 'skipped them'
        : `enqueued ${plan.fireTimes.length} job(s), from ${plan.fireTimes[0].toISOString()}`;
    this.logger.warn(
      `Schedule "${due.name}" missed fire times from ${plan.missedSince!.toISOString()} ` +
        `while no worker ran: ${outcome} (catchUp: ${due.catch_up})`,
    );
  }
}
