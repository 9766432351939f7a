import { JobRow, Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';

// By jobs_flow_idx: only the flow's rows are read.
const FLOW_JOBS = (schema: QueueSchema): string => `
  SELECT j.* FROM ${schema.jobs} j WHERE j.flow_id = $1::uuid ORDER BY j.id`;

/** The jobs of flow `flowId` that retention has kept, in id order (the order `flow()` made them). */
export function flowJobRows(db: Queryable, schema: string, flowId: string): Promise<JobRow[]> {
  return queryRows(db, queueSchema(schema).statement(FLOW_JOBS), [flowId]);
}
