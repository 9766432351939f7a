import { QueueSchema } from '../queue-schema';

/**
 * The insert trigger's function, installed by CreateJobsTable (1795939200000), the only version
 * so far (frozen). One notification per statement: enqueueMany of 10,000 jobs wakes workers
 * once, not 10,000 times. The channel is the schema's own: a queue in another schema is not
 * woken.
 */
export const createJobsNotifyInsertedV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.notifyInserted}() RETURNS trigger LANGUAGE plpgsql
      SET search_path = pg_catalog, pg_temp
    AS $$
    BEGIN
      PERFORM pg_catalog.pg_notify('${schema.insertedChannel}', '');
      RETURN NULL;
    END
    $$
  `;
