import { Queryable, queryRows } from './queryable';

const DATABASE_NOW = `SELECT pg_catalog.now() AS now`;

/**
 * The database's clock: the one every fire time is computed from, so that nodes whose clocks
 * disagree still agree on when a schedule fires.
 */
export async function databaseNow(db: Queryable): Promise<Date> {
  const [row] = await queryRows<{ now: Date }>(db, DATABASE_NOW, []);
  return row.now;
}
