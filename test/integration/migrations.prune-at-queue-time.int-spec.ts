import {
  queueFunction,
  undoMigrationsThrough,
  useUnmigratedDataSource,
} from '../support/migrations';

const V1 = 'job_queue.prune_jobs(bigint, float8, float8, float8, float8, text[], text[], integer)';
const V2_ARGUMENTS = 'bigint, float8, float8, float8, float8, text[], text[], integer, timestamptz';
const V2 = `job_queue.prune_jobs(${V2_ARGUMENTS})`;
/** The previous release's pruner call: eight arguments, no clock. */
const EIGHT_ARGUMENT_CALL = `SELECT held, deleted FROM job_queue.prune_jobs(NULL::bigint,
  0::float8, 0::float8, 0::float8, NULL::float8, NULL::text[], NULL::text[], 10::integer)`;

/**
 * PruneAtQueueTime replaces `prune_jobs()`'s signature with one that takes the queue's time:
 * the grants a runtime role had move to it, its settings stay, the previous release's call of
 * eight arguments still resolves, and down() puts the first signature back as it was.
 */
describe('migration PruneAtQueueTime', () => {
  const dataSource = useUnmigratedDataSource();
  const pruneFunction = () => queueFunction(dataSource(), 'prune_jobs');
  const role = 'prune_at_queue_time_runtime';
  const canExecute = async (signature: string): Promise<boolean> => {
    const [row] = await dataSource().query(
      `SELECT pg_catalog.has_function_privilege($1, $2, 'EXECUTE') AS allowed`,
      [role, signature],
    );
    return row.allowed;
  };

  afterAll(async () => {
    await dataSource()
      ?.query(`DROP OWNED BY ${role}; DROP ROLE IF EXISTS ${role}`)
      .catch(() => undefined);
  });

  it('moves the grants and settings to the new signature, takes old calls, and goes back down', async () => {
    await dataSource().query(`DROP ROLE IF EXISTS ${role}; CREATE ROLE ${role}`);
    await dataSource().runMigrations();
    await undoMigrationsThrough(dataSource(), 'PruneAtQueueTime1795939200014');
    await dataSource().query(`GRANT EXECUTE ON FUNCTION ${V1} TO ${role}`);
    const before = await pruneFunction();

    await dataSource().runMigrations();
    // The second signature: a later migration adds a third beside it.
    const after = await queueFunction(dataSource(), 'prune_jobs', V2_ARGUMENTS);
    expect(after.settings).toEqual(before.settings);
    expect(after.body).toContain('COALESCE($9::timestamptz, pg_catalog.now())');
    expect(await canExecute(V2)).toBe(true);
    expect(after.acl).not.toMatch(/(^|[{,])=X/); // still no EXECUTE for PUBLIC
    await expect(dataSource().query(`SELECT '${V1}'::regprocedure`)).rejects.toThrow(
      /does not exist/,
    );
    expect(await dataSource().query(EIGHT_ARGUMENT_CALL)).toEqual([{ held: true, deleted: 0 }]);

    await undoMigrationsThrough(dataSource(), 'PruneAtQueueTime1795939200014');
    expect(await pruneFunction()).toEqual(before);
    expect(await canExecute(V1)).toBe(true);
  });
});
