import {
  queueFunction,
  undoMigrationsThrough,
  useUnmigratedDataSource,
} from '../support/migrations';

/**
 * PinPrunePlan gives prune_jobs() the nested-loop settings and takes them back on the way down;
 * the body, owner and grants (no EXECUTE for PUBLIC) stay as they were either way.
 */
describe('migration PinPrunePlan', () => {
  const dataSource = useUnmigratedDataSource();
  const pruneFunction = () => queueFunction(dataSource(), 'prune_jobs');

  it('adds nested-loop-only settings and removes them on the way down, keeping body and grants', async () => {
    await dataSource().runMigrations();
    // The first signature, as PinPrunePlan left it (PruneAtQueueTime's down() puts it back).
    await undoMigrationsThrough(dataSource(), 'PruneAtQueueTime1795939200014');
    const pinned = await pruneFunction();
    expect(pinned.settings).toEqual([
      'search_path=pg_catalog, pg_temp',
      'jit=off',
      'enable_hashjoin=off',
      'enable_mergejoin=off',
      'enable_bitmapscan=off',
    ]);
    expect(pinned.acl).not.toMatch(/(^|[{,])=X/); // no EXECUTE for PUBLIC

    await undoMigrationsThrough(dataSource(), 'PinPrunePlan1795939200007');
    const before = await pruneFunction();
    expect(before.settings).toEqual(['search_path=pg_catalog, pg_temp', 'jit=off']);
    expect({ ...before, settings: [] }).toEqual({ ...pinned, settings: [] });

    await dataSource().runMigrations();
    await undoMigrationsThrough(dataSource(), 'PruneAtQueueTime1795939200014');
    expect(await pruneFunction()).toEqual(pinned);
  });
});
