import { Client } from 'pg';

/**
 * How many sessions of `client`'s database wait for a lock now: a test that set up a lock
 * conflict waits for this before its next step, instead of sleeping.
 */
export async function lockWaiters(client: Client): Promise<number> {
  const { rows } = await client.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity
     WHERE wait_event_type = 'Lock' AND datname = current_database()`,
  );
  return rows[0].n;
}
