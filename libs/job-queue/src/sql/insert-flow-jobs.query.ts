import { Job } from '../entities/job.entity';
import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { JobInsertRow, jobInputItem } from './insert-jobs.query';
import { Queryable, queryRows, toJob } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { queueNowSql } from './queue-now.sql';

/** What a job with dependencies, or in a flow, is to be inserted as. */
export interface FlowJobRow {
  /** The job's columns (a flow's jobs have no unique key). */
  row: JobInsertRow;
  /** Its name in its flow, or `null`. */
  stepName: string | null;
  /**
   * `blocked` (unfinished dependencies), `failed` (a dependency had failed for good and the
   * policy is `fail`), or `null`: due, as any new job (`pending`, or `scheduled` until `run_at`).
   */
  status: 'blocked' | 'failed' | null;
  unfinishedDependencies: number;
  /** `fail` or `continue` when it has dependencies, else `null`. */
  onDependencyFailure: 'fail' | 'continue' | null;
  /** Whether another job of this insert depends on it. */
  hasDependants: boolean;
  /** Why it failed at once (`status: 'failed'`), else `null`. */
  lastError: string | null;
}

/** One edge: the job at input position `job` waits for the one at `step`, or for job `id`. */
export interface FlowEdge {
  job: number;
  step?: number;
  id?: string;
}

const QUEUE_NOW = queueNowSql('$4');

/*
 * Ids come from the table's sequence before the insert (`nodes`, materialised: one nextval per
 * input row), so the edges can name the new jobs by input position in the same statement. The
 * edges of a job to a job of this insert, and to existing jobs, go in at once: nobody else can
 * see the new jobs before the transaction commits, and the existing ones were locked by
 * `lockDependencies` in it.
 */
const INSERT_FLOW_JOBS = (schema: QueueSchema): string => `
  WITH nodes AS MATERIALIZED (
    SELECT t.*, pg_catalog.nextval('${schema.quoted}.jobs_id_seq'::pg_catalog.regclass) AS id
    FROM ROWS FROM (pg_catalog.jsonb_to_recordset($1::jsonb) AS (
           type text, data jsonb, priority integer, run_at timestamptz, delay_ms float8,
           max_attempts integer, concurrency_key text, meta jsonb, step_name text, status text,
           unfinished integer, on_failure text, has_dependants boolean, last_error text))
         WITH ORDINALITY AS t
    ORDER BY t.ordinality
  ), inserted AS (
    INSERT INTO ${schema.jobs}
      (id, job_type, data, priority, run_at, status, max_attempts, concurrency_key, meta,
       flow_id, step_name, unfinished_dependencies, on_dependency_failure, has_dependants,
       last_error, completed_at, created_at, updated_at)
    SELECT n.id, n.type, COALESCE(n.data, 'null'::jsonb), COALESCE(n.priority, $2::integer),
           due.run_at,
           CASE WHEN n.status IS NOT NULL THEN n.status
                WHEN due.run_at > ${QUEUE_NOW} THEN 'scheduled' ELSE 'pending' END,
           n.max_attempts, n.concurrency_key, n.meta, $3::uuid, n.step_name,
           COALESCE(n.unfinished, 0), n.on_failure, COALESCE(n.has_dependants, false),
           n.last_error, CASE WHEN n.status = 'failed' THEN ${QUEUE_NOW} END,
           ${QUEUE_NOW}, ${QUEUE_NOW}
    FROM nodes n
      CROSS JOIN LATERAL (
        SELECT COALESCE(n.run_at, ${QUEUE_NOW}
                                  + COALESCE(n.delay_ms, 0::float8) * interval '1 millisecond')
          AS run_at) AS due
    ORDER BY n.ordinality
    RETURNING *
  ), edges AS (
    INSERT INTO ${schema.jobDependencies} (dependency_id, job_id)
    SELECT COALESCE(dependency.id, e.id), dependant.id
    FROM ROWS FROM (pg_catalog.jsonb_to_recordset($5::jsonb) AS (job bigint, step bigint, id bigint))
           AS e
      JOIN nodes dependant ON dependant.ordinality = e.job
      LEFT JOIN nodes dependency ON dependency.ordinality = e.step
  )
  SELECT * FROM inserted ORDER BY id`;

/**
 * Inserts `jobs` (in their order: the ids ascend with it) and their dependency edges in one
 * statement, with `flowId` on each (or none), and returns the new jobs in input order. `edges`
 * name jobs by their position in `jobs`, from 1. Runs at the queue's time `now` (null: the
 * database's now()).
 */
export async function insertFlowJobs(
  db: Queryable,
  schema: string,
  jobs: readonly FlowJobRow[],
  edges: readonly FlowEdge[],
  flowId: string | null,
  now: Date | null = null,
): Promise<Job[]> {
  const rows = await queryRows(db, queueSchema(schema).statement(INSERT_FLOW_JOBS), [
    nodesDocument(jobs),
    DEFAULT_PRIORITY,
    flowId,
    now,
    JSON.stringify(edges),
  ]);
  return rows.map(toJob);
}

/**
 * The input as one JSON document: each job as `insertJobs` sends it (its already serialised
 * `data` reused; a flow's jobs have no unique key), with the flow's columns added.
 */
function nodesDocument(jobs: readonly FlowJobRow[]): string {
  const items = jobs.map(({ row, ...flow }) => {
    const rest = JSON.stringify({
      step_name: flow.stepName,
      status: flow.status,
      unfinished: flow.unfinishedDependencies,
      on_failure: flow.onDependencyFailure,
      has_dependants: flow.hasDependants,
      last_error: flow.lastError,
    });
    return `${jobInputItem(row).slice(0, -1)},${rest.slice(1)}`;
  });
  return `[${items.join(',')}]`;
}
