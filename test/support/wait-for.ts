import { Job, JobStatus, QueueService } from 'nest-pg-job-queue';

/**
 * Polls `condition` until it returns a truthy value and returns it; fails with `description`
 * once `timeoutMs` has passed. Tests wait for a state, never for a guessed amount of time.
 */
export async function waitFor<T>(
  condition: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 20, description = 'condition' } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await condition();
      if (value) return value as NonNullable<T>;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`Timed out after ${timeoutMs} ms waiting for ${description}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Waits until job `id` is `failed` or `completed`, and returns it as read then. */
export function waitForJobToFinish(queue: QueueService, id: string): Promise<Job> {
  return waitFor(
    async () => {
      const job = await queue.getJob(id);
      return job.status === JobStatus.Failed || job.status === JobStatus.Completed
        ? job
        : undefined;
    },
    { description: `job ${id} to finish` },
  );
}
