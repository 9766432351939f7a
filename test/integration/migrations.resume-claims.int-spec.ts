import { claimJobBatchQueryV2 } from '../../libs/job-queue/src/sql/functions/claim-job-batch.v2';
import { claimJobBatchQueryV3 } from '../../libs/job-queue/src/sql/functions/claim-job-batch.v3';
import { queueSchema } from '../../libs/job-queue/src/sql/queue-schema';
import { undoMigrationsThrough, useUnmigratedDataSource } from '../support/migrations';
import { createTestRole, sqlOn, TestRole } from '../support/roles';

const MIGRATION = 'ResumeClaimsAtCursors1795939200009';
const OLD_ARGUMENTS =
  'text, text[], integer, timestamp with time zone, boolean, integer[], integer[], integer[], ' +
  'integer[], double precision[]';
const NEW_ARGUMENTS = `${OLD_ARGUMENTS}, text[], integer[], timestamp with time zone[], bigint[]`;
/** The first signature's settings (kept by `down()`); the second adds the generic plan. */
const SETTINGS = [
  'search_path=pg_catalog, pg_temp',
  'enable_bitmapscan=off',
  'enable_sort=off',
  'jit=off',
  'enable_hashjoin=off',
  'enable_mergejoin=off',
];
const NEW_SETTINGS = [...SETTINGS, 'plan_cache_mode=force_generic_plan'];

/** One `claim_job_batch` of the schema as the catalog holds it, with its signature. */
interface ClaimFunction {
  arguments: string;
  argumentCount: number;
  body: string;
  settings: string[];
  acl: string | null;
  owner: string;
}

/**
 * ResumeClaimsAtCursors gives claim_job_batch four more optional parameters: a new signature
 * running V3, with the old one's settings (and a generic plan) and EXECUTE grants (no PUBLIC), the old one dropped;
 * `down()` puts the old signature back, running V2, with the grants it has by then.
 */
describe('migration ResumeClaimsAtCursors', () => {
  const dataSource = useUnmigratedDataSource();
  const schema = queueSchema('job_queue');
  const bodyOf = (query: string) => expect.stringContaining(`RETURN QUERY ${query};`);
  let role: TestRole | undefined;

  beforeAll(async () => {
    const { url } = dataSource().options as { url?: string };
    role = await createTestRole('jq_claimer', url!);
  });

  afterAll(async () => {
    // Its grants in the database, unless the database is gone already (they went with it).
    if (role && dataSource().isInitialized) {
      await dataSource()
        .query(`DROP OWNED BY ${role.name}`)
        .catch(() => undefined);
    }
    await role?.drop();
  });

  /** Every claim_job_batch of the schema: there should be exactly one. */
  const claimFunctions = async (): Promise<ClaimFunction[]> =>
    dataSource().query(
      `SELECT pg_catalog.pg_get_function_identity_arguments(p.oid) AS arguments,
              p.pronargs AS "argumentCount", p.prosrc AS body, p.proconfig AS settings,
              p.proacl::text AS acl, pg_catalog.pg_get_userbyid(p.proowner) AS owner
       FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
       WHERE n.nspname = 'job_queue' AND p.proname = 'claim_job_batch'
       ORDER BY p.oid`,
    );

  const onlyClaimFunction = async (): Promise<ClaimFunction> => {
    const functions = await claimFunctions();
    expect(functions.map((fn) => fn.arguments)).toHaveLength(1);
    return functions[0];
  };

  /** What the role may execute, by the catalog. */
  const roleMayExecute = async (argumentTypes: string): Promise<boolean> => {
    const [{ allowed }] = (await dataSource().query(
      `SELECT pg_catalog.has_function_privilege($1::text, $2::text, 'EXECUTE') AS allowed`,
      [role!.name, `job_queue.claim_job_batch(${argumentTypes})`],
    )) as Array<{ allowed: boolean }>;
    return allowed;
  };

  /** A claim as the role, on its own connection: the ids it claimed. */
  const callAsRole = async (): Promise<string[]> => {
    const rows = await sqlOn(role!.url)<{ id: string }>(
      `SELECT id::text AS id FROM job_queue.claim_job_batch('w', ARRAY['x'], 1)`,
    );
    return rows.map((row) => row.id);
  };

  /** Inserts a job, and expects a claim as the role to take it. */
  const claimAsRole = async (): Promise<void> => {
    const [{ id }] = (await dataSource().query(
      `INSERT INTO job_queue.jobs (job_type) VALUES ('x') RETURNING id::text AS id`,
    )) as Array<{ id: string }>;
    expect(await callAsRole()).toEqual([id]);
  };

  it('installs the 14-parameter signature running V3, and carries EXECUTE grants both ways', async () => {
    await dataSource().runMigrations();
    const first = await onlyClaimFunction();
    expect(first).toEqual({
      arguments: expect.any(String),
      argumentCount: 14,
      body: expect.stringMatching(/IF pg_catalog\.cardinality\(p_after_job_types\) > 0 THEN/),
      settings: NEW_SETTINGS,
      acl: expect.any(String),
      owner: expect.any(String),
    });
    expect(first.arguments.replace(/p_\w+ /g, '')).toBe(NEW_ARGUMENTS);
    // V3 with cursors, V2 word for word without.
    expect(first.body).toEqual(bodyOf(claimJobBatchQueryV3(schema)));
    expect(first.body).toEqual(bodyOf(claimJobBatchQueryV2(schema)));
    expect(first.acl).not.toMatch(/(^|[{,])=X/); // no EXECUTE for PUBLIC
    expect(first.acl).not.toContain(role!.name);

    // Before the migration: the old signature, running V2, and the role granted EXECUTE on it
    // (with what the claim's statement reads and writes); it cannot claim without that grant.
    await undoMigrationsThrough(dataSource(), MIGRATION);
    const old = await onlyClaimFunction();
    expect(old.argumentCount).toBe(10);
    expect(old.arguments.replace(/p_\w+ /g, '')).toBe(OLD_ARGUMENTS);
    expect(old.body).toEqual(bodyOf(claimJobBatchQueryV2(schema)));
    expect({ ...old, arguments: '', argumentCount: 0, body: '' }).toEqual({
      ...first,
      arguments: '',
      argumentCount: 0,
      body: '',
      settings: SETTINGS,
    });
    await dataSource().query(`GRANT USAGE ON SCHEMA job_queue TO ${role!.name}`);
    await dataSource().query(`GRANT SELECT, UPDATE ON job_queue.jobs TO ${role!.name}`);
    await dataSource().query(`GRANT SELECT ON job_queue.job_types TO ${role!.name}`);
    await expect(callAsRole()).rejects.toMatchObject({ code: '42501' });
    await dataSource().query(
      `GRANT EXECUTE ON FUNCTION job_queue.claim_job_batch(${OLD_ARGUMENTS}) TO ${role!.name}`,
    );
    expect(await roleMayExecute(OLD_ARGUMENTS)).toBe(true);
    await claimAsRole();

    // The migration gives the new signature the role's grant.
    await dataSource().runMigrations();
    const granted = await onlyClaimFunction();
    expect({ ...granted, acl: '' }).toEqual({ ...first, acl: '' });
    expect(granted.acl).toContain(`${role!.name}=X/`);
    expect(granted.acl).not.toMatch(/(^|[{,])=X/);
    expect(await roleMayExecute(NEW_ARGUMENTS)).toBe(true);
    await claimAsRole();

    // down() gives it back to the old signature, running V2 again.
    await undoMigrationsThrough(dataSource(), MIGRATION);
    const back = await onlyClaimFunction();
    expect(back.argumentCount).toBe(10);
    expect(back.body).toEqual(bodyOf(claimJobBatchQueryV2(schema)));
    expect(back.settings).toEqual(SETTINGS);
    expect(back.acl).toBe(granted.acl);
    expect(await roleMayExecute(OLD_ARGUMENTS)).toBe(true);
    await claimAsRole();

    // Up again: the same function as the first time (and the role's grant still there).
    await dataSource().runMigrations();
    expect(await onlyClaimFunction()).toEqual(granted);
    await claimAsRole();
  });
});
