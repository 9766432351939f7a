/**
 * The invariants of the randomized model test, each a named check on the database (and the
 * driver's model) whose message says which job or key broke it and how. `stepChecks` run after
 * every operation; `quiescenceChecks` once every worker is up, nothing is paused and the queue
 * has settled. Add an invariant as a function here and list it in one of the two.
 *
 * A violation that matches a known, filed defect (`KNOWN_DEFECTS`) is reported as that defect and
 * does not fail the run: CI stays green while the defect is open, and its `it.failing` test in
 * `known-defects.e2e-spec.ts` says so. When the fix lands, delete its entry here.
 */
import type { ExecutionContext } from './execute';
import type { HandlerScript, JobSpec } from './fuzz-types';
import { UNFINISHED_KEYED } from './operations';

const FINISHED = `('completed', 'failed', 'cancelled')`;

/** Known defects: a name, and which violations are that defect. */
export const KNOWN_DEFECTS: Record<string, string> = {
  'shutdown-stop-unlogged':
    'issue 53: a run stopped at shutdown after its handler started gives its attempt back and leaves no row in the job log',
  'held-attempt-spent':
    'issue 53: a held job that never started spends an attempt (its claim marks it running)',
};

function known(
  context: ExecutionContext,
  invariant: string,
  message: string,
  defect: string,
): void {
  context.model.violations.push({
    invariant,
    message,
    step: context.model.step,
    knownDefect: defect,
  });
}

/**
 * How far the incremental checks have read. `seq` is taken when a row is written, not when it
 * commits, so a cursor stays 10 s behind the newest row and what was already reported is
 * remembered instead.
 */
interface Cursors {
  transitions: number;
  deleted: number;
  reported: Set<string>;
}
const cursors = new WeakMap<ExecutionContext, Cursors>();
function cursorOf(context: ExecutionContext): Cursors {
  let cursor = cursors.get(context);
  if (!cursor) cursors.set(context, (cursor = { transitions: 0, deleted: 0, reported: new Set() }));
  return cursor;
}
/** True the first time `what` is seen: each row is reported once. */
function firstTime(context: ExecutionContext, what: string): boolean {
  const { reported } = cursorOf(context);
  if (reported.has(what)) return false;
  reported.add(what);
  return true;
}

/** A type's limits as `job_types` held them from `at` on (ms, the database's clock). */
interface StoredLimits {
  at: number;
  perKey: number | null;
  global: number | null;
  rate: { max: number; perMs: number; byKey: boolean } | null;
}

/** Every write of each type's limits, oldest first (`fuzz_limits`). */
async function storedLimits(context: ExecutionContext): Promise<Map<string, StoredLimits[]>> {
  const rows: Array<{
    job_type: string;
    at: number;
    per_key: number | null;
    global_limit: number | null;
    rate_max: number | null;
    rate_per_ms: number | null;
    rate_by_key: boolean;
  }> = await context.dataSource.query(
    `SELECT job_type, extract(epoch FROM at) * 1000 AS at, per_key, global_limit, rate_max,
            rate_per_ms, rate_by_key
     FROM fuzz_limits ORDER BY seq`,
  );
  const history = new Map<string, StoredLimits[]>();
  for (const row of rows) {
    const list = history.get(row.job_type) ?? [];
    list.push({
      at: Number(row.at),
      perKey: row.per_key,
      global: row.global_limit,
      rate:
        row.rate_max === null
          ? null
          : { max: row.rate_max, perMs: row.rate_per_ms!, byKey: row.rate_by_key },
    });
    history.set(row.job_type, list);
  }
  return history;
}

/**
 * The limits that may have applied between `from` and `to`: the one stored before `from` and
 * every one stored until `to`. A write is seen by claims only once it commits, shortly after its
 * time, so a second's slack is given on both sides.
 */
function limitsBetween(
  history: StoredLimits[] | undefined,
  from: number,
  to: number,
): StoredLimits[] {
  if (!history) return [];
  const before = history.filter((l) => l.at <= from - SLACK_MS);
  return [
    ...before.slice(-1),
    ...history.filter((l) => l.at > from - SLACK_MS && l.at <= to + SLACK_MS),
  ];
}
const SLACK_MS = 1_000;

const maxOf = (values: Array<number | null>): number =>
  values.length === 0 || values.some((v) => v === null)
    ? Infinity
    : Math.max(...(values as number[]));

/** 1. No key or type runs more jobs than any limit in force since the oldest of them was claimed. */
async function runsWithinLimits(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  const rows: Array<{
    job_type: string;
    key: string | null;
    keyed: boolean;
    n: number;
    since: number;
    now: number;
    ids: string;
  }> = await dataSource.query(`
      SELECT job_type, concurrency_key AS key, GROUPING(concurrency_key) = 0 AS keyed, count(*)::int AS n,
             extract(epoch FROM min(claimed_at)) * 1000 AS since, extract(epoch FROM now()) * 1000 AS now,
             string_agg(id::text || ' by ' || worker_id || ' at ' || to_char(claimed_at, 'HH24:MI:SS.MS'), ', ' ORDER BY id) AS ids
      FROM job_queue.jobs WHERE status IN ('claimed', 'running')
      GROUP BY GROUPING SETS ((job_type, concurrency_key), (job_type))`);
  model.checked('1 limits');
  const history = await storedLimits(context);
  for (const row of rows) {
    const stored = limitsBetween(history.get(row.job_type), Number(row.since), Number(row.now));
    if (row.keyed) {
      if (row.key === null) continue;
      const allowed = maxOf(stored.map((l) => l.perKey));
      if (row.n > allowed && firstTime(context, `key ${row.ids}`)) {
        model.violate(
          '1 limits',
          `key ${row.job_type}/${row.key} has ${row.n} jobs claimed or running (${row.ids}); its limit is ${allowed}`,
        );
      }
    } else {
      const allowed = maxOf(stored.map((l) => l.global));
      if (row.n > allowed && firstTime(context, `type ${row.ids}`)) {
        model.violate(
          '1 limits',
          `type ${row.job_type} has ${row.n} jobs claimed or running (${row.ids}); its global limit is ${allowed}`,
        );
      }
    }
  }
}

/**
 * 1. Rate windows, on what the claim counts (`claimed_at`): never more claims in a window than its
 * max; with `byKey`, per key, and jobs without a key are not limited.
 */
async function claimsWithinRates(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  const claims: Array<{ job_id: string; job_type: string; key: string | null; at: number }> =
    await dataSource.query(`
    SELECT job_id::text, job_type, concurrency_key AS key, extract(epoch FROM claimed_at) * 1000 AS at
    FROM fuzz_transitions
    WHERE new_status IN ('claimed', 'running') AND old_status NOT IN ('claimed', 'running') AND claimed_at IS NOT NULL
    ORDER BY claimed_at`);
  model.checked('1 rate windows');
  const windows = new Map<string, Array<{ at: number; id: string }>>();
  const history = await storedLimits(context);
  for (const claim of claims) {
    const at = Number(claim.at);
    // Only where one rate was stored throughout the window (a change makes it ambiguous).
    const stored = history.get(claim.job_type) ?? [];
    const index = stored.filter((l) => l.at <= at - SLACK_MS).length - 1;
    const rate = stored[index]?.rate;
    if (!rate) continue;
    const changed = limitsBetween(stored, at - rate.perMs, at).some(
      (l) => JSON.stringify(l.rate) !== JSON.stringify(rate),
    );
    if (changed) continue;
    // A rate by key does not limit a job without a key (README, "Rate limits").
    if (rate.byKey && claim.key === null) continue;
    const key = `${claim.job_type}/${rate.byKey ? claim.key : '*'}`;
    const window = windows.get(`${key}#${index}`) ?? [];
    while (window.length > 0 && window[0].at <= at - rate.perMs) window.shift();
    window.push({ at, id: claim.job_id });
    windows.set(`${key}#${index}`, window);
    if (window.length > rate.max && firstTime(context, `rate ${key} ${claim.job_id}`)) {
      model.violate(
        '1 rate windows',
        `${key}: ${window.length} claims within ${rate.perMs} ms (max ${rate.max}): jobs ${window.map((c) => c.id).join(', ')}`,
      );
    }
  }
}

/**
 * 2. A blocked job's stored count equals its unfinished dependencies; it leaves `blocked` once,
 * after each finished. A dependency's finish is recorded after the release it causes when both
 * are one transaction (the queue's trigger fires first), so the same transaction counts as before.
 */
async function dependenciesCountedOnce(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  model.checked('2 dependencies');
  const counts: Array<{ id: string; stored: number; actual: number; deps: string }> =
    await dataSource.query(`
    SELECT w.id::text, w.unfinished_dependencies AS stored,
           count(d.id) FILTER (WHERE d.status NOT IN ${FINISHED})::int AS actual,
           string_agg(e.dependency_id::text || ':' || coalesce(d.status, 'deleted'), ', ' ORDER BY e.dependency_id) AS deps
    FROM job_queue.jobs w
      JOIN job_queue.job_dependencies e ON e.job_id = w.id
      LEFT JOIN job_queue.jobs d ON d.id = e.dependency_id
    WHERE w.status = 'blocked'
    GROUP BY w.id HAVING w.unfinished_dependencies <> count(d.id) FILTER (WHERE d.status NOT IN ${FINISHED})`);
  for (const row of counts) {
    if (!firstTime(context, `count ${row.id} ${row.stored}/${row.actual}`)) continue;
    model.violate(
      '2 dependencies',
      `blocked job ${row.id} counts ${row.stored} unfinished dependencies, but ${row.actual} are unfinished (${row.deps})`,
    );
  }
  const cursor = cursorOf(context);
  const releases: Array<{
    seq: string;
    job_id: string;
    new_status: string;
    early: string | null;
    exits: number;
  }> = await dataSource.query(
    `
    SELECT t.seq::text, t.job_id::text, t.new_status,
           (SELECT count(*)::int FROM fuzz_transitions x WHERE x.job_id = t.job_id AND x.old_status = 'blocked') AS exits,
           (SELECT string_agg(e.dependency_id::text, ',') FROM job_queue.job_dependencies e
            WHERE e.job_id = t.job_id
              AND coalesce((SELECT b.new_status IN ${FINISHED} FROM fuzz_transitions b
                            WHERE b.job_id = e.dependency_id AND b.seq < w.seq ORDER BY b.seq DESC LIMIT 1), false) = false
              AND NOT EXISTS (SELECT 1 FROM fuzz_transitions f WHERE f.job_id = e.dependency_id
                              AND f.seq > w.seq AND (f.seq < t.seq OR f.xid = t.xid)
                              AND f.new_status IN ${FINISHED})) AS early
    FROM fuzz_transitions t
      CROSS JOIN LATERAL (SELECT min(i.seq) AS seq FROM fuzz_transitions i WHERE i.job_id = t.job_id) w
    WHERE t.seq > $1 AND t.old_status = 'blocked'
    ORDER BY t.seq`,
    [cursor.transitions],
  );
  for (const row of releases) {
    if (!firstTime(context, `release ${row.seq}`)) continue;
    if (row.exits > 1)
      model.violate('2 dependencies', `job ${row.job_id} left blocked ${row.exits} times`);
    if (row.early && row.new_status !== 'failed' && row.new_status !== 'cancelled') {
      model.violate(
        '2 dependencies',
        `job ${row.job_id} left blocked (to ${row.new_status}) before its dependencies ${row.early} finished`,
      );
    }
  }
}

/** 5. No two jobs whose status is in their unique states share a key (a window is in the key). */
async function uniqueKeysHeld(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  model.checked('5 unique keys');
  const rows: Array<{ key: string; jobs: string }> = await dataSource.query(`
    SELECT unique_key AS key, string_agg(id::text || ':' || status, ', ' ORDER BY id) AS jobs
    FROM job_queue.jobs
    WHERE unique_key IS NOT NULL
      AND (status NOT IN ${FINISHED} AND status <> 'blocked' OR job_queue.job_unique_state_counts(unique_states, status))
    GROUP BY unique_key HAVING count(*) > 1`);
  for (const row of rows)
    if (firstTime(context, `unique ${row.jobs}`))
      model.violate('5 unique keys', `key ${row.key} is held by ${row.jobs}`);
}

/** 6. Prune deletes no unfinished job, none an unfinished job depends on, and all it was asked to. */
async function pruneKeepsWhatItMust(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  model.checked('6 prune');
  const cursor = cursorOf(context);
  const deleted: Array<{ seq: string; job_id: string; status: string; dependants: string[] }> =
    await dataSource.query(
      `SELECT seq::text, job_id::text, status, unfinished_dependants::text[] AS dependants
     FROM fuzz_deleted WHERE seq > $1 ORDER BY seq`,
      [cursor.deleted],
    );
  for (const row of deleted) {
    if (!firstTime(context, `deleted ${row.seq}`)) continue;
    if (!['completed', 'failed', 'cancelled'].includes(row.status)) {
      model.violate('6 prune', `job ${row.job_id} was deleted while ${row.status}`);
    } else if (row.dependants.length > 0) {
      model.violate(
        '6 prune',
        `job ${row.job_id} was deleted while ${row.dependants.join(', ')} (unfinished) depended on it`,
      );
    }
  }
  // What the prune was asked to delete: finished 5 s before its cutoff, so that a finish whose
  // transaction began before the cutoff but committed after the prune's snapshot is not counted;
  // not a job with a dependant that was unfinished as the prune ran (it kept that job rightly,
  // and the dependant may have finished since).
  const prune = context.lastPrune;
  if (!prune) return;
  context.lastPrune = undefined;
  const left: Array<{ ids: string | null; n: number }> = await dataSource.query(
    `SELECT string_agg(j.id::text, ',' ORDER BY j.id) AS ids, count(*)::int AS n FROM job_queue.jobs j
     WHERE j.status = ANY ($1::text[])
       AND j.completed_at < to_timestamp($2::float8 / 1000) - ($3::float8 + 5000) * interval '1 millisecond'
       AND NOT EXISTS (SELECT 1 FROM job_queue.job_dependencies e JOIN job_queue.jobs w ON w.id = e.job_id
                       WHERE e.dependency_id = j.id
                         AND (w.status NOT IN ${FINISHED}
                              OR EXISTS (SELECT 1 FROM fuzz_transitions t WHERE t.job_id = w.id
                                         AND t.at > to_timestamp($2::float8 / 1000) - interval '5 seconds')))`,
    [prune.statuses ?? ['completed', 'failed', 'cancelled'], prune.startedDbMs, prune.olderThanMs],
  );
  if (left[0].n > 0) {
    model.violate(
      '6 prune',
      `prune(${prune.olderThanMs} ms, ${prune.statuses ?? 'all'}) left ${left[0].n} prunable job(s): ${left[0].ids}`,
    );
  }
}

/**
 * 9. A redrive (or two at once) moved every failed job it was asked for that it could: each such
 * job that had failed a second before it began is no longer failed, unless another job holds its
 * unique key. Jobs that failed again since (a fast failing handler) have a later `completed_at`.
 */
async function redriveFinishes(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  const redrive = context.lastRedrive;
  if (!redrive) return;
  context.lastRedrive = undefined;
  if (!redrive.succeeded) return; // its error was invariant 7's to judge
  model.checked('9 redrive finishes');
  const all = redrive.calls.some((c) => !c.type && !c.ids);
  const types = redrive.calls.flatMap((c) => (c.type ? [c.type] : []));
  const ids = redrive.calls.flatMap((c) => (c.ids ?? []).map(String));
  const left: Array<{ ids: string | null; n: number }> = await dataSource.query(
    `SELECT string_agg(j.id::text, ',' ORDER BY j.id) AS ids, count(*)::int AS n
     FROM job_queue.jobs j
     WHERE j.status = 'failed'
       AND j.completed_at < to_timestamp($1::float8 / 1000) - interval '1 second'
       AND ($2::boolean OR j.job_type = ANY ($3::text[]) OR j.id = ANY ($4::bigint[]))
       AND (j.unique_key IS NULL OR NOT EXISTS (
             SELECT 1 FROM job_queue.jobs h WHERE h.unique_key = j.unique_key AND h.id <> j.id
               AND (h.status IN ('scheduled', 'pending', 'waiting', 'claimed', 'running')
                    OR job_queue.job_unique_state_counts(h.unique_states, h.status))))`,
    [redrive.startedDbMs, all, types, ids],
  );
  if (left[0].n > 0) {
    model.violate(
      '9 redrive finishes',
      `redrive(${redrive.calls.map((c) => JSON.stringify(c)).join(' and ')}) left ${left[0].n} failed job(s) it could move: ${left[0].ids}`,
    );
  }
}

/**
 * 10. A debounced call keeps its edit: the job it returns holds its data (`holdsEdit`; by
 * default `data.s`, the step, as a batch's items of one key share the last one's data),
 * unless a job of another type holds the key or either key counts in a finished status (the
 * call's or the holder's own `uniqueStates`: those calls are `skipped` by design). A holder that
 * has started gets a successor with the data, so a call answered with a started holder of its own
 * type dropped the edit.
 */
export async function debounceKeptEdit(
  context: ExecutionContext,
  spec: JobSpec,
  job: { id: string; jobType: string; status: string; data: unknown },
  holdsEdit: (data: HandlerScript | null) => boolean = (data) => data?.s === context.model.step,
): Promise<void> {
  if (spec.unique?.debounceMs === undefined) return;
  context.model.checked('10 debounce keeps the edit');
  if (holdsEdit(job.data as HandlerScript | null)) return;
  const onlyUnfinished = (spec.unique.states ?? []).every((state) =>
    UNFINISHED_KEYED.includes(state),
  );
  if (
    job.jobType !== spec.type ||
    !onlyUnfinished ||
    !['claimed', 'running'].includes(job.status)
  ) {
    return;
  }
  // The holder's own states, read by the index's function as invariant 9 reads them.
  const [holder] = await context.dataSource.query(
    `SELECT job_queue.job_unique_state_counts(unique_states, 'completed')
              OR job_queue.job_unique_state_counts(unique_states, 'failed')
              OR job_queue.job_unique_state_counts(unique_states, 'cancelled') AS counts_finished
     FROM job_queue.jobs WHERE id = $1`,
    [job.id],
  );
  if (holder?.counts_finished) {
    return;
  }
  context.model.violate(
    '10 debounce keeps the edit',
    `a debounced enqueue of key ${spec.unique.key} was answered with job ${job.id} (${job.status}), without its data`,
  );
}

/** After every operation. */
export async function stepChecks(context: ExecutionContext): Promise<void> {
  await runsWithinLimits(context);
  await dependenciesCountedOnce(context);
  await uniqueKeysHeld(context);
  await pruneKeepsWhatItMust(context);
  await redriveFinishes(context);
  const [{ transitions, deleted }] = await context.dataSource.query(`
    SELECT (SELECT coalesce(max(seq), 0) FROM fuzz_transitions
            WHERE at < clock_timestamp() - interval '10 seconds')::text AS transitions,
           (SELECT coalesce(max(seq), 0) FROM fuzz_deleted
            WHERE at < clock_timestamp() - interval '10 seconds')::text AS deleted`);
  const cursor = cursorOf(context);
  cursor.transitions = Math.max(cursor.transitions, Number(transitions));
  cursor.deleted = Math.max(cursor.deleted, Number(deleted));
}

/** The unfinished jobs with no reason to wait that a query can show. */
export const REASONLESS_JOBS = `
  SELECT j.id::text, j.job_type, j.status, j.concurrency_key AS key,
         extract(epoch FROM (SELECT max(t.at) FROM fuzz_transitions t WHERE t.job_id = j.id)) * 1000 AS since
  FROM job_queue.jobs j
  WHERE j.status NOT IN ${FINISHED}
    AND NOT (j.status = 'blocked' AND EXISTS (
          SELECT 1 FROM job_queue.job_dependencies e JOIN job_queue.jobs d ON d.id = e.dependency_id
          WHERE e.job_id = j.id AND d.status NOT IN ${FINISHED}))
    AND NOT (j.status = 'waiting' AND (
          EXISTS (SELECT 1 FROM job_queue.jobs h
                  WHERE h.job_type = j.job_type AND h.concurrency_key IS NOT DISTINCT FROM j.concurrency_key
                    AND (h.status IN ('claimed', 'running') OR (h.status = 'scheduled' AND h.attempts > 0)))
          OR EXISTS (SELECT 1 FROM job_queue.job_rate_blocked r
                     WHERE r.job_type = j.job_type AND r.opens_at > now() - interval '1 second')))
  ORDER BY j.id`;

/**
 * 3. At quiescence (every worker up, nothing paused) every job finishes or waits for a reason a
 * query shows. Waits until nothing is unfinished but reasonless jobs that stayed so for 3 s, or
 * until `deadlineMs`.
 */
export async function settle(context: ExecutionContext, deadlineMs: number): Promise<void> {
  const { dataSource, model } = context;
  model.checked('3 nothing waits forever');
  const deadline = Date.now() + deadlineMs;
  let stuckSince = new Map<string, number>();
  for (;;) {
    const [{ unfinished }] = await dataSource.query(
      `SELECT count(*)::int AS unfinished FROM job_queue.jobs WHERE status NOT IN ${FINISHED}`,
    );
    const reasonless: Array<{
      id: string;
      job_type: string;
      status: string;
      key: string | null;
      since: number;
    }> = await dataSource.query(REASONLESS_JOBS);
    const now = Date.now();
    const stuck = reasonless.filter((row) => row.status === 'waiting' || row.status === 'blocked');
    const next = new Map(stuck.map((row) => [row.id, stuckSince.get(row.id) ?? now]));
    stuckSince = next;
    const settledStuck =
      stuck.length > 0 &&
      stuck.length === unfinished &&
      [...next.values()].every((t) => now - t >= 3_000);
    if (unfinished === 0 || settledStuck || now >= deadline) {
      for (const row of reasonless) {
        model.violate(
          '3 nothing waits forever',
          `job ${row.id} (${row.job_type}${row.key ? ` key ${row.key}` : ''}) is ${row.status} with nothing to wait for`,
        );
      }
      if (unfinished > reasonless.length) {
        const rows: Array<{ ids: string; status: string }> = await dataSource.query(
          `SELECT status, string_agg(id::text, ',' ORDER BY id) AS ids FROM job_queue.jobs
           WHERE status NOT IN ${FINISHED} GROUP BY status`,
        );
        model.violate(
          '3 nothing waits forever',
          `not settled within ${deadlineMs} ms: ${rows.map((r) => `${r.status} ${r.ids.slice(0, 200)}`).join('; ')}`,
        );
      }
      return;
    }
    await new Promise((done) => setTimeout(done, 250));
  }
}

/**
 * 4. Handler starts of a job = attempts spent + snoozes + superseded runs, for finished jobs
 * that no operator reset (a retry or redrive gives fresh attempts).
 */
async function startsMatchAttempts(context: ExecutionContext): Promise<void> {
  const { dataSource, model } = context;
  model.checked('4 starts = attempts');
  const rows: Array<{
    id: string;
    status: string;
    starts: number;
    attempts: number;
    snoozed: number;
    superseded: number;
    handed_back: number;
    log: string;
  }> = await dataSource.query(`
    SELECT j.id::text, j.status, j.attempts,
           (SELECT count(*)::int FROM fuzz_runs r WHERE r.job_id = j.id) AS starts,
           (SELECT count(*)::int FROM job_queue.job_events e WHERE e.job_id = j.id AND e.kind = 'snoozed') AS snoozed,
           (SELECT count(*)::int FROM job_queue.job_events e WHERE e.job_id = j.id AND e.kind = 'rescued') AS superseded,
           (SELECT count(*)::int FROM (
              SELECT t.old_status, t.new_status, t.attempts, lag(t.attempts) OVER (ORDER BY t.seq) AS before
              FROM fuzz_transitions t WHERE t.job_id = j.id) x
            WHERE x.old_status IN ('claimed', 'running') AND x.new_status = 'pending'
              AND x.attempts < x.before) AS handed_back,
           (SELECT string_agg(e.kind, ' ' ORDER BY e.id) FROM job_queue.job_events e WHERE e.job_id = j.id AND e.kind <> 'log' AND e.kind <> 'progress') AS log
    FROM job_queue.jobs j
    WHERE j.status IN ${FINISHED}
      AND NOT EXISTS (SELECT 1 FROM fuzz_transitions r WHERE r.job_id = j.id
                      AND r.old_status IN ${FINISHED} AND r.new_status NOT IN ${FINISHED})`);
  for (const row of rows) {
    if (!firstTime(context, `starts ${row.id}`)) continue;
    // A rescued run may or may not have reached its handler before its process died.
    const spent = row.attempts + row.snoozed;
    const message = `job ${row.id} (${row.status}): ${row.starts} handler starts, ${row.attempts} attempts, ${row.snoozed} snoozes, ${row.superseded} rescued, ${row.handed_back} handed back; its log: ${row.log}`;
    if (row.starts > spent + row.superseded) {
      // Runs handed back (attempt given back) by a worker's shutdown, and not in the log.
      if (row.starts - spent - row.superseded <= row.handed_back) {
        known(context, '4 starts = attempts', message, 'shutdown-stop-unlogged');
      } else model.violate('4 starts = attempts', message);
    } else if (row.starts < spent - row.superseded) {
      known(context, '4 starts = attempts', message, 'held-attempt-spent');
    }
  }
}

/**
 * 8. After a stats refresh, `stats()` equals a recount; every finished job that ran ends its log
 * with its final row (`rescued` for one the reaper failed).
 */
async function statsAndLogAgree(context: ExecutionContext): Promise<void> {
  const { dataSource, model, queue } = context;
  model.checked('8 stats and log');
  const stats = await queue.stats({ maxAgeMs: 0 });
  const recount: Array<{ job_type: string; status: string; n: number }> = await dataSource.query(
    'SELECT job_type, status, count(*)::int AS n FROM job_queue.jobs GROUP BY 1, 2',
  );
  const counted = new Map(recount.map((r) => [`${r.job_type}/${r.status}`, r.n]));
  for (const [type, byStatus] of Object.entries(stats)) {
    for (const [status, n] of Object.entries(byStatus)) {
      if (status === 'paused') continue;
      const expected = counted.get(`${type}/${status}`) ?? 0;
      if (n !== expected)
        model.violate(
          '8 stats and log',
          `stats() says ${type} has ${n} ${status}; a recount says ${expected}`,
        );
    }
  }
  for (const row of recount) {
    if (!stats[row.job_type])
      model.violate(
        '8 stats and log',
        `stats() has no ${row.job_type}, which has ${row.n} ${row.status}`,
      );
  }
  // A job whose worker died on its last attempt is failed by the reaper, whose row is `rescued`.
  const logs: Array<{ id: string; status: string; last: string | null; log: string | null }> =
    await dataSource.query(`
    SELECT j.id::text, j.status,
           (SELECT e.kind FROM job_queue.job_events e WHERE e.job_id = j.id
              AND (e.kind IN ${FINISHED} OR e.kind = 'rescued') ORDER BY e.id DESC LIMIT 1) AS last,
           (SELECT string_agg(e.kind, ' ' ORDER BY e.id) FROM job_queue.job_events e
            WHERE e.job_id = j.id AND e.kind NOT IN ('log', 'progress')) AS log
    FROM job_queue.jobs j
    WHERE j.status IN ${FINISHED}
      AND EXISTS (SELECT 1 FROM fuzz_runs r WHERE r.job_id = j.id)`);
  for (const row of logs) {
    if (row.last !== row.status && !(row.status === 'failed' && row.last === 'rescued')) {
      model.violate(
        '8 stats and log',
        `job ${row.id} is ${row.status}; its last final log row is ${row.last ?? 'missing'} (its log: ${row.log ?? 'empty'})`,
      );
    }
  }
}

/** Once settled. */
export async function quiescenceChecks(context: ExecutionContext): Promise<void> {
  await claimsWithinRates(context);
  await startsMatchAttempts(context);
  await statsAndLogAgree(context);
}
