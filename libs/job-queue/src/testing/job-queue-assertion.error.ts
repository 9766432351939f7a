import { JobQueueError } from '../errors/job-queue.error';

/**
 * A testing kit assertion that did not hold (`expectEnqueued`, `expectNotEnqueued`), or a
 * `drain` that stopped at `maxJobs` with jobs still due. Its message lists what was enqueued,
 * payloads included: the kit is the one place this library shows `data` in an error, because a
 * test's own fixtures are what a failing test needs to see.
 *
 * @publicApi
 */
export class JobQueueAssertionError extends JobQueueError {}
