import { Controller, Get, MessageEvent, Param, Post, Query, Sse, UseGuards } from '@nestjs/common';
import { Observable } from 'rxjs';
import { InjectRepository } from '@nestjs/typeorm';
import { FindOptionsSelect, LessThan, Repository } from 'typeorm';
import { Job, JobQueueStats, QueueService } from 'nest-pg-job-queue';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { DEFAULT_LIST_LIMIT, ListJobsQuery } from './dto/list-jobs.query';
import { StaleJobsQuery } from './dto/stale-jobs.query';
import { StatsQuery } from './dto/stats.query';
import { decodeJobCursor, encodeJobCursor } from './job-cursor';
import { JobResponse, toJobResponse } from './job.response';
import { JobLogLines, LOG_LINES_POLL_MS } from './job-log-lines';
import { FINAL_STATUSES, JobEventStream } from './job-event.stream';

/** What JobResponse shows: `data` (the client's own payload, maybe large) is not even fetched. */
const LISTED_COLUMNS: FindOptionsSelect<Job> = {
  id: true,
  jobType: true,
  status: true,
  priority: true,
  progress: true,
  currentStage: true,
  attempts: true,
  maxAttempts: true,
  runAt: true,
  createdAt: true,
  startedAt: true,
  completedAt: true,
  result: true,
  lastError: true,
};

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
    // The Job entity is a plain TypeORM entity: list and filter it like any other.
    @InjectRepository(Job) private readonly jobs: Repository<Job>,
    private readonly jobEvents: JobEventStream,
  ) {}

  /**
   * `GET /jobs?status=failed&type=image.process&limit=50&cursor=…`, newest first (by id), a page
   * at a time: `{ items, nextCursor }`, where `nextCursor` (null on the last page) is the `cursor`
   * of the next page. Keyset pagination: each page is the next `limit` rows of the primary key
   * index below the cursor's id, so a page deep in a big table costs what the first one does, and
   * a job enqueued while a client walks the pages neither repeats nor hides one. No total: a
   * count of a big table is the slow part (see GET /jobs/stats for counts).
   *
   * A filter walks the same index and skips the rows it does not match: cheap for a common
   * status or type, slow for a rare one (1 row in 10,000 of a million-row table: ~0.2-0.3 s a
   * page). An app that lists by rare values adds indexes in its own migration, e.g.
   * `(status, id)`, `(job_type, id)` and `(job_type, status, id)`; each costs every job write.
   *
   * `page` and `pageSize` (the offset paging this route had) are refused with a 400 that says
   * what to send instead, rather than ignored.
   */
  @Get()
  async list(
    @Query() query: ListJobsQuery,
  ): Promise<{ items: JobResponse[]; nextCursor: string | null }> {
    const { status, type: jobType } = query;
    const limit = query.limit ?? DEFAULT_LIST_LIMIT;
    const after = query.cursor === undefined ? undefined : decodeJobCursor(query.cursor);
    // One row more than the page tells whether there is a next page, without a second query.
    const rows = await this.jobs.find({
      select: LISTED_COLUMNS,
      where: {
        ...(status && { status }),
        ...(jobType && { jobType }),
        ...(after && { id: LessThan(after.id) }),
      },
      order: { id: 'DESC' },
      take: limit + 1,
    });
    const items = rows.slice(0, limit);
    const nextCursor =
      rows.length > limit ? encodeJobCursor({ id: items[items.length - 1].id }) : null;
    return { items: items.map(toJobResponse), nextCursor };
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
