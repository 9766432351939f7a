/**
 * The queue's clock in a statement, from the bind parameter `param` (as `$3`): the time the
 * testing kit moved the queue to, or, NULL as it always is in production, the statement's own
 * now(). Every statement that reads or writes the queue's time takes it this way, so a test can
 * move it forward without touching the process's or the database's clock.
 */
export const queueNowSql = (param: string): string =>
  `COALESCE(${param}::timestamptz, pg_catalog.now())`;
