import { Controller, Get, MessageEvent, Param, Post, Query, Sse, UseGuards } from '@nestjs/common';
import { Observable } from 'rxjs';
import { JobQueueStats, QueueService } from 'nest-pg-job-queue';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { DEFAULT_LIST_LIMIT, ListJobsQuery } from './dto/list-jobs.query';
import { StaleJobsQuery } from './dto/stale-jobs.query';
import { StatsQuery } from './dto/stats.query';
import { JobResponse, toJobResponse } from './job.response';
import { JobLogLines, LOG_LINES_POLL_MS } from './job-log-lines';
import { FINAL_STATUSES, JobEventStream } from './job-event.stream';

/**
 * Monitoring and management of jobs, as an operator would use them: every route wants the admin
 * token (`Authorization: Bearer <token>`, see AdminTokenGuard). Jobs are answered as JobResponse:
 * no worker names, no stack traces.
 */
@Controller('jobs')
@UseGuards(AdminTokenGuard)
export class JobsController {
  constructor(
    private readonly queue: QueueService,
    private readonly jobEvents: JobEventStream,
  ) {}

  /**
   * `GET /jobs?status=failed&type=image.process&limit=50&cursor=…`, newest first (by id), a page
   * at a time: `{ items, nextCursor }`, where `nextCursor` (null on the last page) is the `cursor`
   * of the next page. Keyset pagination through `QueueService.listJobs`: each page is read from
   * where the cursor points, so a page deep in a big table costs what the first one does, and a
   * job enqueued while a client walks the pages neither repeats nor hides one. No total: a count
   * of a big table is the slow part (see GET /jobs/stats for counts).
   *
   * A filter reads an index of the queue's (its migrations add `(job_type, status, id)`), so a
   * rare type or status pages as fast as a common one; the app needs no index of its own.
   * Listed jobs come without their `data`, which the answer does not show anyway.
   *
   * `page` and `pageSize` (the offset paging this route had) are refused with a 400 that says
   * what to send instead, rather than ignored.
   */
  @Get()
  async list(
    @Query() { status, type, limit, cursor }: ListJobsQuery,
  ): Promise<{ items: JobResponse[]; nextCursor: string | null }> {
    const page = await this.queue.listJobs({
      status,
      type,
      limit: limit ?? DEFAULT_LIST_LIMIT,
      cursor,
    });
    return { items: page.jobs.map(toJobResponse), nextCursor: page.nextCursor };
  }

  /**
   * Counts by type and status from the queue's snapshot (one row read, refreshed in the
   * background); `?maxAgeMs=0` counts the table now, which reads every row of it.
   */
  @Get('stats')
  stats(@Query() { maxAgeMs }: StatsQuery): Promise<JobQueueStats> {
    return this.queue.stats(maxAgeMs === undefined ? {} : { maxAgeMs });
  }

  /** Claimed or running jobs that have not changed for `olderThanMinutes` (default 10). */
  @Get('stale')
  async stale(@Query() { olderThanMinutes }: StaleJobsQuery): Promise<JobResponse[]> {
    return (await this.queue.findStale((olderThanMinutes ?? 10) * 60_000)).map(toJobResponse);
  }

  @Get(':id')
  async get(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.getJob(id));
  }

  /**
   * `GET /jobs/:id/events` (`curl -N`): the job's life as Server-Sent Events, until it ends.
   * First a `state` message (the job as `GET /jobs/:id` shows it, so a client that connects late
   * misses nothing it could not read), then one message per event (`started`, `progress`,
   * `retrying`, `snoozed`, `rescued`, `completed`, `failed`, `cancelled`) with the job's id,
   * status, attempt, progress and stage, never its data or result, and a `log` message per line
   * its handler logged (`ctx.log`), read every second and before the final event; the stream
   * ends after the final one. It follows the job whichever instance runs it. A client that
   * disconnects ends its subscription. An unknown id is a 404 before the stream opens.
   */
  @Sse(':id/events')
  async events(@Param('id') id: string): Promise<Observable<MessageEvent>> {
    await this.queue.getJob(id); // JobNotFoundError: a 404 while it is still a plain response
    return new Observable<MessageEvent>((subscriber) => {
      // Follow first, then read the job: an event between the two is held and sent after the
      // `state` message, and a job that ended before the client came ends the stream at once.
      let held: MessageEvent[] | undefined = [];
      let ended = false;
      const lines = new JobLogLines(this.queue, id);
      const sendLines = () =>
        lines.next().then(
          (messages) => messages.forEach((message) => subscriber.next(message)),
          (error: unknown) => subscriber.error(error),
        );
      const poll = setInterval(() => void sendLines(), LOG_LINES_POLL_MS);
      // The lines that rode on the final write come before the final event.
      const end = (final?: MessageEvent) =>
        void sendLines().then(() => {
          if (final) subscriber.next(final);
          subscriber.complete();
        });
      const send = (message: MessageEvent) =>
        held ? held.push(message) : subscriber.next(message);
      const live = this.jobEvents.of(id).subscribe({
        next: ({ event, id: jobId, status, attempt, progress, stage }) => {
          const message = { type: event, data: { id: jobId, status, attempt, progress, stage } };
          if (FINAL_STATUSES.has(status) && !held) end(message);
          else send(message);
        },
        complete: () => (held ? (ended = true) : undefined),
      });
      this.queue.getJob(id).then(
        (job) => {
          subscriber.next({ type: 'state', data: toJobResponse(job) });
          const pending = held ?? [];
          held = undefined;
          // With `ended`, the last one held is the final event.
          const final = ended ? pending.pop() : undefined;
          for (const message of pending) subscriber.next(message);
          if (ended || FINAL_STATUSES.has(job.status)) end(final);
        },
        (error: unknown) => subscriber.error(error),
      );
      return () => {
        clearInterval(poll);
        live.unsubscribe();
      };
    });
  }

  @Post(':id/cancel')
  async cancel(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.cancel(id));
  }

  @Post(':id/retry')
  async retry(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.retry(id));
  }

  /**
   * Stops every worker, on every node, from claiming jobs of `:type` until it is resumed; its
   * running jobs finish. Kept in the database: a restart does not undo it. `GET /jobs/stats`
   * shows `paused` per type. A bad type (blank, too long, NUL) is a 400 naming `type`.
   */
  @Post('types/:type/pause')
  async pause(@Param('type') type: string): Promise<{ type: string; paused: boolean }> {
    await this.queue.pause(type);
    return { type, paused: true };
  }

  /** Lets workers claim `:type` again; idle ones are woken at once. */
  @Post('types/:type/resume')
  async resume(@Param('type') type: string): Promise<{ type: string; paused: boolean }> {
    await this.queue.resume(type);
    return { type, paused: false };
  }
}
