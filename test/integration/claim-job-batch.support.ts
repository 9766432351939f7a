import { Client, ClientBase } from 'pg';
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
