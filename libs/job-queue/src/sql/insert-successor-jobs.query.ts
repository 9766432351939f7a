import { DEFAULT_PRIORITY } from '../job-queue.constants';
import { JobInsertRow, jobInputItem } from './insert-jobs.query';
import { integerArrayText } from './integer-array-text';
import { JobRow, Queryable, queryRows } from './queryable';
import { QueueSchema, queueSchema } from './queue-schema';
import { queueNowSql } from './queue-now.sql';

/** A debounced row whose key's holder has started: the successor to add after that holder. */
export interface SuccessorRow {
  row: JobInsertRow;
  /** The holder's id and its stored key (window folded in), as the look-up found them. */
  holderId: string;
  holderKey: string;
}

const QUEUE_NOW = queueNowSql('$3');

/**
 * A debounce successor: a job `blocked` on its key's holder (one `job_dependencies` edge,
 * `on_dependency_failure` `continue`), with the holder's stored key. `jobs_unique_key_idx`
 * leaves `blocked` out, so holder and successor both keep the key; `jobs_successor_key_idx`
 * (AddDebounceSuccessors) admits one successor a key, and a second caller's row does nothing
 * here (it replaces that successor in its next round). The holder's finish releases the
 * successor in its own statement (`jobs_dependency_finished`), whatever the outcome, and the
 * successor then takes the key as the holder leaves it: no other job can take it between.
 *
 * The holders are locked first, in key order (the order every keyed statement takes keys in),
 * with `has_dependants` set so that their finish fires the trigger; a holder that finished or
 * was handed back meanwhile is no longer `claimed` or `running` and gets no successor (its row
 * goes round again). The holders are locked by id alone (`$4`, also in the document) and checked
 * as the lock returned them (their latest version): a status in the condition on `jobs` let the
 * planner scan `jobs_lease_idx`, every job in flight, instead of reading them by primary key.
 * Ids are drawn in input order.
 */
const INSERT_SUCCESSORS = (schema: QueueSchema): string => `
  WITH given AS MATERIALIZED (
    SELECT t.*, pg_catalog.nextval('${schema.quoted}.jobs_id_seq'::pg_catalog.regclass) AS id
    FROM ROWS FROM (pg_catalog.jsonb_to_recordset($1::jsonb) AS (
           type text, data jsonb, priority integer, delay_ms float8, max_attempts integer,
           unique_states smallint, concurrency_key text, meta jsonb,
           holder_id bigint, holder_key text)) WITH ORDINALITY AS t
    ORDER BY t.ordinality
  ), locked AS (
    SELECT d.id, d.status, d.unique_key, d.job_type FROM ${schema.jobs} AS d
    WHERE d.id = ANY ($4::bigint[])
    ORDER BY d.unique_key COLLATE pg_catalog."C"
    FOR NO KEY UPDATE OF d
  ), holders AS (
    UPDATE ${schema.jobs} AS d SET has_dependants = true
    FROM locked JOIN given AS g ON g.holder_id = locked.id
    WHERE d.id = locked.id AND locked.unique_key = g.holder_key AND locked.job_type = g.type
      AND locked.status IN ('claimed', 'running')
    RETURNING d.id
  ), inserted AS (
    INSERT INTO ${schema.jobs}
      (id, job_type, data, priority, run_at, status, max_attempts, unique_key, unique_states,
       concurrency_key, meta, unfinished_dependencies, on_dependency_failure,
       created_at, updated_at)
    SELECT g.id, g.type, COALESCE(g.data, 'null'::jsonb), COALESCE(g.priority, $2::integer),
           ${QUEUE_NOW} + COALESCE(g.delay_ms, 0::float8) * interval '1 millisecond',
           'blocked', g.max_attempts, g.holder_key, g.unique_states, g.concurrency_key, g.meta,
           1, 'continue', ${QUEUE_NOW}, ${QUEUE_NOW}
    FROM given AS g JOIN holders AS h ON h.id = g.holder_id
    ORDER BY g.holder_key COLLATE pg_catalog."C"
    ON CONFLICT DO NOTHING
    RETURNING *
  ), edges AS (
    INSERT INTO ${schema.jobDependencies} (dependency_id, job_id)
    SELECT g.holder_id, i.id FROM inserted AS i JOIN given AS g ON g.id = i.id
  )
  SELECT g.ordinality - 1::bigint AS "inputIndex", i.*
  FROM inserted AS i JOIN given AS g ON g.id = i.id`;

/**
 * Adds a successor after each row's started holder, in one statement; returns the successors
 * added by input position. A row without one (its holder finished, or another caller's successor
 * holds the key) is for the caller to send round again.
 */
export async function insertSuccessorJobs(
  db: Queryable,
  schema: string,
  successors: readonly SuccessorRow[],
  now: Date | null = null,
): Promise<Map<number, JobRow>> {
  // Each row's insert item without its key (the successor takes the holder's stored key, window
  // included), with the holder added before the item's closing brace.
  const document = `[${successors
    .map(({ row, holderId, holderKey }) =>
      jobInputItem({ ...row, uniqueKey: null, uniqueWindowMs: null }).replace(
        /\}$/,
        `,"holder_id":${holderId},"holder_key":${JSON.stringify(holderKey)}}`,
      ),
    )
    .join(',')}]`;
  const inserted = await queryRows(db, queueSchema(schema).statement(INSERT_SUCCESSORS), [
    document,
    DEFAULT_PRIORITY,
    now,
    integerArrayText(successors.map(({ holderId }) => holderId)),
  ]);
  return new Map(inserted.map(({ inputIndex, ...row }) => [Number(inputIndex), row]));
}
