// An app that declares no job types: every signature is as it was before `JobTypes`. Checked by
// test/unit/job-types.spec.ts, in a program of its own.
import { Injectable } from '@nestjs/common';
import {
  EnqueueManyItem,
  EnqueueOptions,
  EnqueueResult,
  Job,
  JobContext,
  JobHandler,
  QueueService,
  WaitForJobOptions,
  WriteOptions,
} from 'nest-pg-job-queue';
import { assertTrue, Equal, typeOf } from '../type-assertions';

interface Thumbnail {
  url: string;
}

@Injectable()
export class Handlers {
  @JobHandler('image.thumbnail')
  async thumbnail(job: Job<Thumbnail>, ctx: JobContext): Promise<{ width: number }> {
    await ctx.progress(10);
    return { width: job.data.url.length };
  }

  @JobHandler(`dynamic.${'name'}`)
  anything(): string {
    return 'whatever it returns';
  }
}

export async function produce(queue: QueueService, type: string): Promise<void> {
  const job = await queue.enqueue('image.thumbnail', { url: 'x' });
  typeOf(job).is<Job<{ url: string }>>();
  const explicit = await queue.enqueue<Thumbnail>(type, { url: 'x' }, { priority: 1 });
  typeOf(explicit).is<Job<Thumbnail>>();
  const outcome = await queue.enqueueWithOutcome(type, 42);
  typeOf(outcome).is<EnqueueResult<number>>();
  const jobs = await queue.enqueueMany<Thumbnail>([{ type, data: { url: 'x' } }]);
  typeOf(jobs).is<Job<Thumbnail>[]>();
  const items: EnqueueManyItem<number>[] = [{ type: 'a', data: 1 }];
  const outcomes = await queue.enqueueManyWithOutcome(items);
  typeOf(outcomes).is<EnqueueResult<number>[]>();

  assertTrue<Equal<Awaited<ReturnType<typeof queue.getJob>>, Job<unknown>>>();
  assertTrue<Equal<Awaited<ReturnType<typeof queue.getJob<Thumbnail>>>, Job<Thumbnail>>>();
  const waited = await queue.waitForJob<Thumbnail>(job.id, { timeoutMs: 1_000 });
  typeOf(waited).is<Job<Thumbnail>>();
  // A type name is only a string here, not a key of the (empty) map.
  assertTrue<
    Equal<Awaited<ReturnType<typeof queue.getJob<'image.thumbnail'>>>, Job<'image.thumbnail'>>
  >();

  // The signatures a call resolves to (the last overload) are today's.
  assertTrue<
    Equal<Parameters<typeof queue.enqueue>, [jobType: string, data: unknown, opts?: EnqueueOptions]>
  >();
  assertTrue<
    Equal<
      Parameters<typeof queue.enqueueMany>,
      [items: EnqueueManyItem<unknown>[], opts?: WriteOptions]
    >
  >();
  assertTrue<
    Equal<Parameters<typeof queue.waitForJob>, [id: string | number, opts: WaitForJobOptions]>
  >();
  assertTrue<Equal<Parameters<typeof JobHandler>[0], string>>();
}
