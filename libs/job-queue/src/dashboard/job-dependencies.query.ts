import { Queryable, queryRows } from '../sql/queryable';
import { QueueSchema, queueSchema } from '../sql/queue-schema';

/** A job the shown job waits for (`dependency`), or one that waits for it (`dependant`). */
export interface RelatedJob {
  id: string;
  stepName: string | null;
  jobType: string;
  status: string;
}

export interface JobDependencies {
  dependencies: RelatedJob[];
  dependants: RelatedJob[];
  /** The most rows a side holds. */
  limit: number;
  /** Whether either side had more than `limit` rows (the rest are not read). */
  capped: boolean;
}

/**
 * A job's edges both ways, each side by id and at most `$2` rows: its dependencies through
 * `job_dependencies_job_idx` (job_id, dependency_id), its dependants through
 * `job_dependencies_pkey` (dependency_id, job_id), each other job by its primary key. An edge
 * whose other job was pruned has no row.
 */
const JOB_DEPENDENCIES = (schema: QueueSchema): string => `
  (SELECT 'dependency'::text AS side, d.id::text AS id, d.step_name, d.job_type, d.status
   FROM ${schema.jobDependencies} e JOIN ${schema.jobs} d ON d.id = e.dependency_id
   WHERE e.job_id = $1::bigint
   ORDER BY e.dependency_id
   LIMIT $2::integer)
  UNION ALL
  (SELECT 'dependant'::text AS side, w.id::text AS id, w.step_name, w.job_type, w.status
   FROM ${schema.jobDependencies} e JOIN ${schema.jobs} w ON w.id = e.job_id
   WHERE e.dependency_id = $1::bigint
   ORDER BY e.job_id
   LIMIT $2::integer)`;

/** See `JOB_DEPENDENCIES`; `jobId` is a checked job id (`getJob` read it). */
export async function readJobDependencies(
  db: Queryable,
  schema: string,
  jobId: string,
  limit: number,
): Promise<JobDependencies> {
  const rows = await queryRows<{
    side: 'dependency' | 'dependant';
    id: string;
    step_name: string | null;
    job_type: string;
    status: string;
  }>(db, queueSchema(schema).statement(JOB_DEPENDENCIES), [jobId, limit + 1]);
  const sides = { dependency: [] as RelatedJob[], dependant: [] as RelatedJob[] };
  for (const row of rows) {
    sides[row.side].push({
      id: row.id,
      stepName: row.step_name,
      jobType: row.job_type,
      status: row.status,
    });
  }
  const capped = sides.dependency.length > limit || sides.dependant.length > limit;
  return {
    dependencies: sides.dependency.slice(0, limit),
    dependants: sides.dependant.slice(0, limit),
    limit,
    capped,
  };
}
