/**
 * Per-job context, carried from the enqueue to the run (module option `context`): `capture` runs
 * at each `enqueue` and `enqueueMany` call, in the caller's context, and what it returns is stored
 * in each job's `meta`; `restore` runs each handler call inside the context `meta` describes (an
 * AsyncLocalStorage, a logger's fields, a tenant id). Tracing (`nest-pg-job-queue/opentelemetry`)
 * carries its trace context the same way, beside these hooks.
 *
 * `meta` is JSON, at most `maxMetaBytes`, checked like `data`; it is not payload, so keep
 * secrets out of it: it is shown where jobs are shown.
 *
 * @publicApi
 */
export interface JobContextHooks {
  /** What to store in the job's `meta` (merged with what instruments add); `undefined`: nothing. */
  capture?(): Record<string, unknown> | undefined;
  /** Runs `run` (the handler call) inside the context `meta` holds (null: none was stored). */
  restore?<T>(meta: Record<string, unknown> | null, run: () => T): T;
}
