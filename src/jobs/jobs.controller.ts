import {
  BadRequestException,
  Controller,
  Get,
  Param,
  Post,
  Query,
  UseGuards,
} from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { FindOptionsSelect, LessThan, Repository } from 'typeorm';
import { Job, JobQueueStats, JobStatus, QueueService } from 'nest-pg-job-queue';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { optionalEnum, optionalQueryInt, optionalString } from '../common/request-validation';
import { encodeJobCursor, optionalJobCursor } from './job-cursor';
import { JobResponse, toJobResponse } from './job.response';

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;

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

/** The offset paging GET /jobs had: a client still sending it is told what to send now. */
const OFFSET_PARAMS: Record<string, string> = {
  page: "pages are walked with cursor: send the previous answer's nextCursor",
  pageSize: 'the page size is limit',
};

function refuseOffsetPaging(query: Record<string, unknown>): void {
  for (const [field, instead] of Object.entries(OFFSET_PARAMS)) {
    if (query[field] === undefined) continue;
    throw new BadRequestException({
      statusCode: 400,
      error: 'Bad Request',
      message: `${field} is no longer accepted by GET /jobs: ${instead} (limit 1 to ${MAX_LIMIT}, default ${DEFAULT_LIMIT})`,
      field,
    });
  }
}

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
    @Query() query: Record<string, unknown>,
  ): Promise<{ items: JobResponse[]; nextCursor: string | null }> {
    refuseOffsetPaging(query);
    const status = optionalEnum('status', query.status, Object.values(JobStatus));
    const jobType = optionalString('type', query.type);
    const limit =
      optionalQueryInt('limit', query.limit, { min: 1, max: MAX_LIMIT }) ?? DEFAULT_LIMIT;
    const after = optionalJobCursor(query.cursor);
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
  stats(@Query('maxAgeMs') maxAgeMs?: string): Promise<JobQueueStats> {
    const ms = optionalQueryInt('maxAgeMs', maxAgeMs, { min: 0, max: 86_400_000 });
    return this.queue.stats(ms === undefined ? {} : { maxAgeMs: ms });
  }

  /** Claimed or running jobs that have not changed for `olderThanMinutes` (default 10). */
  @Get('stale')
  async stale(@Query('olderThanMinutes') olderThanMinutes?: string): Promise<JobResponse[]> {
    const minutes = optionalQueryInt('olderThanMinutes', olderThanMinutes, {
      min: 0,
      max: 525_600,
    });
    return (await this.queue.findStale((minutes ?? 10) * 60_000)).map(toJobResponse);
  }

  @Get(':id')
  async get(@Param('id') id: string): Promise<JobResponse> {
    return toJobResponse(await this.queue.getJob(id));
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
