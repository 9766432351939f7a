import { Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

/** One dependency of a job, finished or not, as `ctx.dependencyResults()` reads it. */
export interface DependencyRow {
  id: string;
  step_name: string | null;
  job_type: string;
  status: string;
  result: unknown;
  last_error: string | null;
}

// By the dependant's edges (job_dependencies_job_idx), then each dependency by primary key.
const DEPENDENCY_RESULTS = (schema: QueueSchema): string => `
  SELECT d.id::text AS id, d.step_name, d.job_type, d.status, d.result, d.last_error
  FROM ${schema.jobDependencies} e JOIN ${schema.jobs} d ON d.id = e.dependency_id
  WHERE e.job_id = $1::bigint
  ORDER BY e.dependency_id`;

/** The dependencies of job `jobId`, by id. */
export function readDependencyResults(
  db: Queryable,
  schema: string,
  jobId: string,
): Promise<DependencyRow[]> {
  return queryRows<DependencyRow>(db, queueSchema(schema).statement(DEPENDENCY_RESULTS), [jobId]);
}
