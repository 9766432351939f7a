// An app that declares its job types: what compiles and what does not. Checked by
// test/unit/job-types.spec.ts, in a program of its own (the declaration below is global to it).
// Each `@ts-expect-error` line must fail to compile for the reason its comment gives.
import { Injectable } from '@nestjs/common';
import { Job, JobContext, JobHandler, JobOfType, QueueService, SnoozeJob } from 'nest-pg-job-queue';
import { assertTrue, Equal, typeOf } from '../type-assertions';

export class ReportRequest {
  month: string;
  requestedAt: Date;
}

export interface ReportResult {
  rows: number;
}

declare module 'nest-pg-job-queue' {
  interface JobTypes {
    report_generation: { data: ReportRequest; result: ReportResult };
    'email.send': { data: { to: string }; result: void };
  }
}

@Injectable()
export class ReportProcessor {
  @JobHandler('report_generation', { maxAttempts: 5 })
  async generate(job: Job<ReportRequest>, ctx: JobContext<ReportRequest>): Promise<ReportResult> {
    typeOf(job.data.requestedAt).is<Date>();
    await ctx.progress(50);
    return { rows: job.data.month.length };
  }

  @JobHandler('report_generation')
  later(job: Job<ReportRequest>, ctx: JobContext): ReportResult | SnoozeJob {
    return job.attempts > 1 ? { rows: 0 } : ctx.snooze(1_000);
  }

  @JobHandler('email.send')
  send(job: JobOfType<'email.send'>): void {
    typeOf(job.data).is<{ to: string }>();
  }

  // @ts-expect-error -- a handler that returns the wrong result
  @JobHandler('report_generation')
  async wrongResult(): Promise<{ rows: string }> {
    return { rows: 'many' };
  }

  // @ts-expect-error -- a handler that takes another type's data
  @JobHandler('email.send')
  wrongData(job: Job<ReportRequest>): void {
    void job;
  }

  // @ts-expect-error -- a handler of a type the map does not declare
  @JobHandler('report_generaton')
  unknownType(): void {}
}

export async function produce(queue: QueueService): Promise<void> {
  const data = { month: '2026-07', requestedAt: new Date() };
  const job = await queue.enqueue('report_generation', data, { priority: 10 });
  typeOf(job).is<Job<ReportRequest, ReportResult>>();
  typeOf(job.result).is<ReportResult | null>();
  // @ts-expect-error -- the assertion itself: a type that is only assignable is not the same
  typeOf(job).is<Job<ReportRequest>>();

  // @ts-expect-error -- a wrong payload
  await queue.enqueue('report_generation', { month: 202607 });
  // @ts-expect-error -- a payload with a field missing
  await queue.enqueue('email.send', {});
  // @ts-expect-error -- an unknown type
  await queue.enqueue('report_generaton', data);
  // @ts-expect-error -- a type name from a plain string
  await queue.enqueue(String('report_generation'), data);

  const { job: kept, outcome } = await queue.enqueueWithOutcome('email.send', { to: 'a@b.c' });
  typeOf(kept).is<Job<{ to: string }, void>>();
  void outcome;

  const jobs = await queue.enqueueMany([
    { type: 'report_generation', data, priority: 5 },
    { type: 'email.send', data: { to: 'a@b.c' } },
  ]);
  typeOf(jobs).is<Array<Job<ReportRequest, ReportResult> | Job<{ to: string }, void>>>();
  // @ts-expect-error -- one item's data is another type's
  await queue.enqueueMany([{ type: 'email.send', data }]);
  // @ts-expect-error -- an unknown type in a batch
  await queue.enqueueManyWithOutcome([{ type: 'nope', data: {} }]);

  const read = await queue.getJob<'report_generation'>(job.id);
  typeOf(read).is<Job<ReportRequest, ReportResult>>();
  const done = await queue.waitForJob<'email.send'>(kept.id, { timeoutMs: 1_000 });
  typeOf(done).is<Job<{ to: string }, void>>();
  // Without a type name: as without the map.
  assertTrue<Equal<Awaited<ReturnType<typeof queue.getJob>>, Job>>();
  assertTrue<Equal<Awaited<ReturnType<typeof queue.getJob<{ n: number }>>>, Job<{ n: number }>>>();
}
