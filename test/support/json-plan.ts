import { ClientBase } from 'pg';

/** A node of `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)`. */
export interface JsonPlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Shared Hit Blocks': number;
  'Shared Read Blocks': number;
  Plans?: JsonPlanNode[];
}

export function* nodesOf(node: JsonPlanNode): Generator<JsonPlanNode> {
  yield node;
  for (const child of node.Plans ?? []) yield* nodesOf(child);
}

/** What the scans of one index read: rows returned and rows read then filtered out. */
export function readThrough(
  plan: JsonPlanNode,
  indexName: string,
): { scans: number; rows: number; removed: number } {
  const scans = [...nodesOf(plan)].filter((node) => node['Index Name'] === indexName);
  return {
    scans: scans.length,
    rows: scans.reduce((sum, n) => sum + n['Actual Rows'] * n['Actual Loops'], 0),
    removed: scans.reduce((sum, n) => sum + (n['Rows Removed by Filter'] ?? 0), 0),
  };
}

/** Buffers the whole statement touched. */
export const blocksOf = (plan: JsonPlanNode): number =>
  plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];

/**
 * The settings a function runs with (its `SET` clauses, `proconfig`), so that its statement can
 * be EXPLAINed as the function plans it: `claim_job_batch` pins its plan with them.
 */
export async function functionSettings(
  client: ClientBase,
  qualifiedName: string,
): Promise<Record<string, string>> {
  const { rows } = await client.query<{ setting: string }>(
    `SELECT unnest(proconfig) AS setting FROM pg_proc
     WHERE oid = CASE WHEN strpos($1, '(') > 0 THEN $1::regprocedure ELSE $1::regproc END`,
    [qualifiedName],
  );
  return Object.fromEntries(
    rows.map(({ setting }) => [
      setting.slice(0, setting.indexOf('=')),
      setting.slice(setting.indexOf('=') + 1),
    ]),
  );
}

/** Runs `fn` in a transaction rolled back after, with `settings` set for that transaction only. */
async function withLocalSettings<T>(
  client: ClientBase,
  settings: Record<string, string>,
  fn: () => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    for (const [name, value] of Object.entries(settings)) {
      await client.query(`SELECT set_config($1::text, $2::text, true)`, [name, value]);
    }
    return await fn();
  } finally {
    await client.query('ROLLBACK');
  }
}

/**
 * Runs `sql` under EXPLAIN (ANALYZE, BUFFERS) in a transaction rolled back after, with `settings`
 * set for that transaction only.
 */
export function explainAnalyze(
  client: ClientBase,
  sql: string,
  params: unknown[],
  settings: Record<string, string> = {},
): Promise<JsonPlanNode> {
  return withLocalSettings(client, settings, async () => {
    const { rows } = await client.query<{ 'QUERY PLAN': Array<{ Plan: JsonPlanNode }> }>(
      `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`,
      params,
    );
    return rows[0]['QUERY PLAN'][0].Plan;
  });
}

/** The plan of `sql` as text, not run, with `settings` set as `explainAnalyze` sets them. */
export function explainText(
  client: ClientBase,
  sql: string,
  settings: Record<string, string> = {},
): Promise<string> {
  return withLocalSettings(client, settings, async () => {
    const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`);
    return rows.map((row) => row['QUERY PLAN']).join('\n');
  });
}
