import { SCHEDULE_NOT_FOUND } from '../job-queue.messages';
import { JobQueueError } from './job-queue.error';

/**
 * No cron schedule has this name (`QueueService.runSchedule`): it was never written, or was
 * deleted (`unschedule`, or a handler's `cron` removed). `schedules()` lists those there are.
 *
 * @publicApi
 */
export class ScheduleNotFoundError extends JobQueueError {
  /** The name asked for. */
  readonly scheduleName: string;

  constructor(scheduleName: string) {
    super(SCHEDULE_NOT_FOUND(scheduleName));
    this.scheduleName = scheduleName;
  }
}
