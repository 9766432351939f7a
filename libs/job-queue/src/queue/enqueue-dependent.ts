import { Job } from '../entities/job.entity';
import { isFinishedStatus } from '../entities/job-status.enum';
import { InvalidJobInputError } from '../errors';
import { DependencyFailurePolicy } from '../interfaces/enqueue-options.interface';
import { JobInsertRow } from '../sql/insert-jobs.query';
import { insertFlowJobs } from '../sql/insert-flow-jobs.query';
import { LockedDependency, lockDependencies } from '../sql/lock-dependencies.query';
import { Queryable } from '../sql/queryable';

/**
 * Enqueues `row` to wait for the jobs `ids`, in the caller's transaction `db` (two statements:
 * the dependencies are locked first, so none can finish unseen before the new job's edges
 * commit; see `lockDependencies`). What they are now decides what it starts as: `blocked` while
 * any is unfinished; `failed` at once when one failed or was cancelled and `policy` is `fail`;
 * else due. An id of no job is an `InvalidJobInputError` naming `dependsOn[i]`; the caller's
 * transaction then writes nothing.
 */
export async function enqueueDependent(
  db: Queryable,
  schema: string,
  row: JobInsertRow,
  ids: readonly string[],
  policy: DependencyFailurePolicy,
  now: Date | null,
): Promise<Job> {
  const locked = new Map((await lockDependencies(db, schema, ids)).map((d) => [d.id, d]));
  ids.forEach((id, i) => {
    if (!locked.has(id)) {
      throw new InvalidJobInputError(
        `Invalid job dependsOn[${i}]: no job has id ${id} (never enqueued, or finished and ` +
          'pruned since).',
        `dependsOn[${i}]`,
        id,
      );
    }
  });
  const dependencies = [...locked.values()];
  const failed = dependencies.find((d) => d.status === 'failed' || d.status === 'cancelled');
  const unfinished = dependencies.filter((d) => !isFinishedStatus(d.status)).length;
  const failsNow = failed !== undefined && policy === 'fail';
  const [job] = await insertFlowJobs(
    db,
    schema,
    [
      {
        row,
        stepName: null,
        status: failsNow ? 'failed' : unfinished > 0 ? 'blocked' : null,
        unfinishedDependencies: failsNow ? 0 : unfinished,
        onDependencyFailure: policy,
        hasDependants: false,
        lastError: failsNow ? dependencyFailure(failed) : null,
      },
    ],
    ids.map((id) => ({ job: 1, id })),
    null,
    now,
  );
  return job;
}

/** The `last_error` of a job failed by its dependency, as the trigger words it. */
function dependencyFailure(dependency: LockedDependency): string {
  const what = dependency.status === 'failed' ? 'failed' : 'was cancelled';
  return `Dependency ${dependency.id} (${dependency.job_type}) ${what}`;
}
