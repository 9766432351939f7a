import type { Job } from '../entities/job.entity';
import type { SnoozeJob } from '../errors/snooze-job';
import type { JobContext } from './job-context.interface';
import type { JobOptions } from './enqueue-options.interface';

/**
 * The app's job types, each with its data and its result: empty in the package, declared once
 * by the app through declaration merging.
 *
 * ```ts
 * declare module 'nest-pg-job-queue' {
 *   interface JobTypes {
 *     report_generation: { data: ReportRequest; result: ReportResult };
 *   }
 * }
 * ```
 *
 * Once it has keys, `enqueue`, `enqueueWithOutcome`, `enqueueMany` and
 * `enqueueManyWithOutcome` take only its type names, with their `data`; a `@JobHandler(type)`
 * method takes `Job<Data, Result>` and returns (a promise of) `Result` or a `SnoozeJob`;
 * `getJob<'report_generation'>(id)` and `waitForJob<'report_generation'>(id, opts)` resolve
 * with that type's job. While it is empty, every signature is as it was without it.
 *
 * @publicApi
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the app's merge
export interface JobTypes {}

/**
 * `X` while `JobTypes` is empty, `never` once the app declared it: the untyped signatures (any
 * type name, any data) take nothing then, so an unknown type name does not compile.
 *
 * @publicApi
 */
export type UntypedOnly<X> = keyof JobTypes extends never ? X : never;

/** The data of job type `K` of `JobTypes` (`unknown` when its entry has none). @publicApi */
export type JobDataOf<K extends keyof JobTypes> = JobTypes[K] extends { data: infer D }
  ? D
  : unknown;

/** The result of job type `K` of `JobTypes` (`unknown` when its entry has none). @publicApi */
export type JobResultOf<K extends keyof JobTypes> = JobTypes[K] extends { result: infer R }
  ? R
  : unknown;

/**
 * A job of type `K` of `JobTypes`, its data and result typed; for a union of types, the union
 * of their jobs.
 *
 * @publicApi
 */
export type JobOfType<K extends keyof JobTypes> = K extends keyof JobTypes
  ? Job<JobDataOf<K>, JobResultOf<K>>
  : never;

/**
 * What `getJob<T>` and `waitForJob<T>` resolve with: with `T` a type name of `JobTypes`, that
 * type's job; with anything else, `Job<T>` (`T` the data type, as without `JobTypes`).
 *
 * @publicApi
 */
export type JobFor<T> = [T] extends [never]
  ? Job<T>
  : [T] extends [keyof JobTypes]
    ? JobOfType<T & keyof JobTypes>
    : Job<T>;

/**
 * One item of `enqueueMany` once `JobTypes` is declared: a type name of it and that type's data,
 * with the per-job options.
 *
 * @publicApi
 */
export type TypedEnqueueManyItem<K extends keyof JobTypes = keyof JobTypes> =
  K extends keyof JobTypes ? JobOptions & { type: K; data: JobDataOf<K> } : never;

/**
 * The method `@JobHandler(type)` marks, once `JobTypes` declares `type`: it takes the type's job
 * (and its context) and returns its result, or a `SnoozeJob`, or a promise of either.
 *
 * @publicApi
 */
export type TypedJobHandlerMethod<K extends keyof JobTypes> = (
  job: JobOfType<K>,
  ctx: JobContext<JobDataOf<K>>,
) => JobResultOf<K> | SnoozeJob | Promise<JobResultOf<K> | SnoozeJob>;
