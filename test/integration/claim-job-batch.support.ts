import { Client, ClientBase } from 'pg';
import {
  CURRENT_CLAIM_FROM_HEADS_QUERY,
  CURRENT_CLAIM_JOB_BATCH_QUERY,
} from '../../libs/job-queue/src/sql/functions/current-functions';
import { createTestDatabase, TestDatabase } from '../support/database';

/** A `jobs` row as `claim_job_batch` returns it, with `id` as a number (the tests stay far below 2^53). */
export interface ClaimedJobRow {
  id: number;
  job_type: string;
  priority: number;
  status: string;
  data: unknown;
  worker_id: string | null;
  claimed_at: Date | null;
  heartbeat_at: Date | null;
  updated_at: Date;
  created_at: Date;
  run_at: Date;
  started_at: Date | null;
  attempts: number;
  max_attempts: number | null;
}

export async function connect(url: string): Promise<Client> {
  const client = new Client({ connectionString: url });
  await client.connect();
  return client;
}

/** A test file's own database and one client connected to it. */
export interface ClaimTestDatabase {
  database: TestDatabase;
  client: Client;
}

/**
 * Registers a `beforeAll` that creates the file's database and connects a client to it, and an
 * `afterAll` that ends the client and drops the database. Fields are set once `beforeAll` ran.
 */
export function useClaimTestDatabase(): ClaimTestDatabase {
  const db = {} as ClaimTestDatabase;
  beforeAll(async () => {
    db.database = await createTestDatabase();
    db.client = await connect(db.database.url);
  });
  afterAll(async () => {
    await db.client?.end();
    await db.database?.drop();
  });
  return db;
}

/**
 * Calls `claim_job_batch` with the seed's three arguments, or with `p_now` when `now` is given
 * (a string is passed to PostgreSQL as is, keeping microseconds).
 */
export async function claim(
  client: ClientBase,
  workerId: string,
  jobTypes: string[],
  batchSize: number,
  now?: Date | string,
): Promise<ClaimedJobRow[]> {
  const { rows } =
    now === undefined
      ? await client.query(
          `SELECT * FROM job_queue.claim_job_batch($1::text, $2::text[], $3::int)`,
          [workerId, jobTypes, batchSize],
        )
      : await client.query(
          `SELECT * FROM job_queue.claim_job_batch($1::text, $2::text[], $3::int, $4::timestamptz)`,
          [workerId, jobTypes, batchSize, now],
        );
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

export const idsOf = (rows: Array<{ id: number }>): number[] => rows.map((row) => row.id);

/** Reads jobs back by id, in id order. */
export async function jobsById(client: ClientBase, ids: number[]): Promise<ClaimedJobRow[]> {
  const { rows } = await client.query(
    `SELECT * FROM job_queue.jobs WHERE id = ANY($1::bigint[]) ORDER BY id`,
    [ids],
  );
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

export async function countByStatus(client: ClientBase): Promise<Record<string, number>> {
  const { rows } = await client.query<{ status: string; count: number }>(
    `SELECT status, count(*)::int AS count FROM job_queue.jobs GROUP BY status`,
  );
  return Object.fromEntries(rows.map((row) => [row.status, row.count]));
}

/** The types of `claim_job_batch`'s fourteen parameters, as a PREPARE of its statement names them. */
export const CLAIM_PARAMETER_TYPES = `text, text[], integer, timestamptz, boolean, integer[],
  integer[], integer[], integer[], float8[], text[], integer[], timestamptz[], bigint[]`;

/** Where a claim resumes one type and priority (`p_after_*`), as the worker's cursors say. */
export interface ClaimCursor {
  jobType: string;
  priority: number;
  createdAt: string | Date;
  id: number | string;
}

/**
 * The statement's fourteen parameters for a claim of `jobTypes` by worker `w`, with no per-type
 * caps or policy, resuming after `cursors` (none: every type from its head).
 */
export function claimParameters(
  jobTypes: string[],
  batchSize: number,
  now: Date | null = null,
  cursors: ClaimCursor[] = [],
): unknown[] {
  const after =
    cursors.length === 0
      ? [null, null, null, null]
      : [
          cursors.map((c) => c.jobType),
          cursors.map((c) => c.priority),
          cursors.map((c) => c.createdAt),
          cursors.map((c) => String(c.id)),
        ];
  return ['w', jobTypes, batchSize, now, false, null, null, null, null, null, ...after];
}

/** `claim_job_batch` resuming after `cursors`, as a worker calls it (`p_start` false). */
export async function claimAfter(
  client: ClientBase,
  jobTypes: string[],
  batchSize: number,
  cursors: ClaimCursor[],
): Promise<ClaimedJobRow[]> {
  const { rows } = await client.query(
    `SELECT * FROM job_queue.claim_job_batch($1::text, $2::text[], $3::int,
       p_after_job_types => $4::text[], p_after_priorities => $5::integer[],
       p_after_created_at => $6::timestamptz[], p_after_ids => $7::bigint[])`,
    ['w', jobTypes, batchSize, ...claimParameters(jobTypes, batchSize, null, cursors).slice(10)],
  );
  return rows.map((row) => ({ ...row, id: Number(row.id) }));
}

/** One of the two statements `claim_job_batch` runs, with the parameters of one call. */
export interface ClaimStatementCall {
  /** `from the heads` (no cursors: V2's statement) or `after cursors` (V3's). */
  label: string;
  sql: string;
  params: unknown[];
}

/**
 * The claim of `jobTypes` as each of the function's two statements runs it: from the heads (a
 * call without cursors), and after a cursor per type at the start of priority `priority` (every
 * row of that priority is after it, the other priorities are ranges read from their heads).
 */
export function claimStatementCalls(
  jobTypes: string[],
  batchSize: number,
  now: Date | null = null,
  priority = 100,
): ClaimStatementCall[] {
  const cursors = jobTypes.map((jobType) => ({
    jobType,
    priority,
    createdAt: '-infinity',
    id: 0,
  }));
  return [
    {
      label: 'from the heads',
      sql: CURRENT_CLAIM_FROM_HEADS_QUERY,
      params: claimParameters(jobTypes, batchSize, now).slice(0, 10),
    },
    {
      label: 'after cursors',
      sql: CURRENT_CLAIM_JOB_BATCH_QUERY,
      params: claimParameters(jobTypes, batchSize, now, cursors),
    },
  ];
}
