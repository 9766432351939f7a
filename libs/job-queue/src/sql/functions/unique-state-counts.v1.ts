import { QueueSchema } from '../queue-schema';

/**
 * `job_unique_state_counts(states, status)` (AddUniquenessPolicies, 1795939200013): whether a
 * row whose unique key counts in `states` (`jobs.unique_states`, one bit per status as in
 * `UNIQUE_STATE_BITS`) counts in `status`. NULL states count in the unfinished statuses only,
 * as every key did before the row stored its states.
 *
 * Immutable, so the unique index's predicate can call it: the index then decides, for every
 * writer at once, which rows hold a key. Its pinned search_path keeps a caller's from changing
 * what `&` means.
 */
export const createUniqueStateCountsV1 = (schema: QueueSchema): string => `
    CREATE FUNCTION ${schema.uniqueStateCounts}(states smallint, status text) RETURNS boolean
      LANGUAGE sql IMMUTABLE PARALLEL SAFE
      SET search_path = pg_catalog, pg_temp
    AS $$
      SELECT CASE
        WHEN states IS NULL THEN status IN ('scheduled', 'pending', 'claimed', 'running', 'waiting')
        ELSE (states & CASE status
                WHEN 'scheduled' THEN 1 WHEN 'pending' THEN 2 WHEN 'waiting' THEN 4
                WHEN 'claimed' THEN 8 WHEN 'running' THEN 16 WHEN 'completed' THEN 32
                WHEN 'failed' THEN 64 WHEN 'cancelled' THEN 128 ELSE 0 END) <> 0
      END
    $$`;
