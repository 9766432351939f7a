// The NOTIFY that a statement making job transitions adds to itself, so that other processes
// hear of them (`@OnJobEvent`, `waitForJob`): sent by the same statement, it is delivered only if
// the transition commits, and in commit order.
//
// A payload is `{"o":<origin workerId>,"e":[[id,type,status,attempt,progress,stage,event],...]}`
// (see events/job-event-payload.ts). PostgreSQL refuses a payload of 8000 bytes or more, so a
// batch goes out in chunks, each under PAYLOAD_BUDGET bytes, all from the one statement.

/**
 * Bytes a chunk's items may take with its header. Chunks are cut where the running sum of item
 * sizes crosses a multiple of `budget - largest item`, so a chunk holds less than `budget`.
 */
const PAYLOAD_BUDGET = 7_900;

/** The JSON item of one event row `e` (columns as `JobEventRows` names them). */
const ITEM = `pg_catalog.json_build_array(e.id::text, e.job_type, e.status, e.attempts, e.progress,
                e.current_stage, e.event)::text`;

/**
 * CTEs `event_items`, `event_chunks` and `events_notified` (one row: `sent`, the chunks sent) over
 * `rows`, a CTE with the columns `id, job_type, status, attempts, progress, current_stage, event`
 * (one row per job); `channel` and `origin` are the statement's placeholders (`$13::text`).
 * `events_notified` must be read by the statement (`eventsSentGuard`): a CTE that is not read is
 * not run.
 */
export function notifyJobEventsCtes(rows: string, channel: string, origin: string): string {
  return `
  event_items AS (
    SELECT ${ITEM} AS item, e.id FROM ${rows} AS e
  ), event_sizes AS (
    SELECT item, (pg_catalog.sum(pg_catalog.octet_length(item)::bigint + 1::bigint)
             OVER (ORDER BY id ROWS UNBOUNDED PRECEDING))::bigint AS upto,
           pg_catalog.max(pg_catalog.octet_length(item)::bigint + 1::bigint) OVER () AS largest
    FROM event_items
  ), event_chunks AS (
    SELECT pg_catalog.string_agg(item, ',' ORDER BY upto) AS items
    FROM event_sizes
    GROUP BY (upto - 1::bigint) / GREATEST(1::bigint, ${PAYLOAD_BUDGET}::bigint
      - pg_catalog.octet_length(pg_catalog.to_json(${origin})::text)::bigint - largest)
  ), events_notified AS (
    SELECT pg_catalog.count(*) AS sent
    FROM event_chunks CROSS JOIN LATERAL pg_catalog.pg_notify(${channel},
      '{"o":' || pg_catalog.to_json(${origin})::text || ',"e":[' || event_chunks.items || ']}')
      AS notified
  )`;
}

/**
 * The payload of one job's event (a statement that changes at most one job), from `row`'s
 * columns as in `notifyJobEventsCtes`, with `event` the event's SQL text.
 */
export function oneJobEventPayload(row: string, event: string, origin: string): string {
  return `'{"o":' || pg_catalog.to_json(${origin})::text || ',"e":[' ||
    pg_catalog.json_build_array(${row}.id::text, ${row}.job_type, ${row}.status, ${row}.attempts,
      ${row}.progress, ${row}.current_stage, ${event})::text || ']}'`;
}
