import { createHash } from 'node:crypto';
import { QueryRunner } from 'typeorm';
import { jobQueueMigrationsFor } from '../../libs/job-queue/src/migrations';

/**
 * SHA-256 of every statement (text and parameters, in order) each migration's `up` and `down`
 * send, for the default schema. A database that ran a shipped migration keeps what that text
 * installed, so the text must never change: a refactor that builds it from shared parts must
 * build the same bytes. A new migration adds its two lines here; no line ever changes.
 */
const SHIPPED: Record<string, string> = {
  'CreateJobsTable1795939200000 up':
    'bdee3113295fc28894b3b34068344866adcd1a53dcd1947b2581a0d4fb29e75d',
  'CreateJobsTable1795939200000 down':
    '40bdbe9bc84c087ff4dc5d9353467c0bbf845cd0d2fa3d379bd439a4fc052dd7',
  'CreateClaimJobBatchFunction1795939200001 up':
    '47dcca720da4eb5b7d811c981b162d1c0c237bc5e89dbead636f51de7b88c5d8',
  'CreateClaimJobBatchFunction1795939200001 down':
    'f9cbf6574df893116a54683c1a7c6f0d891b5e4b31a20650f55e0b6d3cfce34a',
  'CreateJobTypesTable1795939200002 up':
    'fa013f397dc1819a0fe88da39f3a3b0768466fda43eb512734b498ce2fec67a3',
  'CreateJobTypesTable1795939200002 down':
    '5cc926b4e82d7835421fb532be2c79138e949650740fcc5862f59a8c618e0645',
  'AddJobRetention1795939200003 up':
    '36c8e90280a0bb81e7372465f9eb83ffe1f2920624147bf591e1f73ecab39ea5',
  'AddJobRetention1795939200003 down':
    '2d733a68c78cd0bd223f5a3817d479234fbc54ab61023fa23acca15d6683cf38',
  'CreateJobStatsTable1795939200004 up':
    '9cd3b33962a3a8eb6c309a76f5d4b06c51c98b4b843379f4a8fcc1ff2a347c43',
  'CreateJobStatsTable1795939200004 down':
    '323f461daf38aea4b2b6c043c5ce09c428589b5bdb039c4ed5e1c654125fb513',
  'CreateJobSchedulesTable1795939200005 up':
    '2092ddf29e2b0195fcc815bdc3666773e6ccedf4148cec10a8b1227f6b1b6340',
  'CreateJobSchedulesTable1795939200005 down':
    '06b97a48db0f7a1ea32d1cf13cdab63033d634c30d8c1733ab1756cde9e66dad',
  'SkipPausedJobTypesInClaim1795939200006 up':
    '741226eca128c517ebd08ba485525d2f07170f9cd9841ac45116ffeda3d6714f',
  'SkipPausedJobTypesInClaim1795939200006 down':
    '5ac4d649a747a828b2e36fad970f92c7f4df4ceda04d8218b6a863955367c01e',
  'PinPrunePlan1795939200007 up':
    '2607ffcfd89cadeb341d131334e2efc0fe618b69e2279d56f4d8e34f3b1a50a7',
  'PinPrunePlan1795939200007 down':
    '6f779a8fc27fe10457996f7833960f95c1d539d47c36416a5b2c983ceb06c84e',
  'CreateJobScheduleTicksTable1795939200008 up':
    '9fca4f8241f2f9644439014dd5e682a23d5aca5bcd5fa747bfa171b6f76f19c1',
  'CreateJobScheduleTicksTable1795939200008 down':
    'e56a6b5d6c37781a6bf21c085fc6379a148d3a32b948567eaf72f869437eb5df',
  'ResumeClaimsAtCursors1795939200009 up':
    'f955b0dcb8a346e7586f691a3af094c0a29f27f2f253b79ba0deee29c80a7667',
  'ResumeClaimsAtCursors1795939200009 down':
    '51bd68bf8b43deefe4fa44c5fb5e1cc644812196dde70673e622d182e41ffcc5',
  'CreateJobEventsTable1795939200010 up':
    'f473624ce6935238a7bac8f147152f5c423b5264c65cb0fe24a00e751e91cee2',
  'CreateJobEventsTable1795939200010 down':
    '9a24a8da344e967845eba6e86a0be19f6bb6a966596a64d27717d9ba2c05c8a3',
  'AddConcurrencyLimits1795939200011 up':
    '8a85eb2e004f828f525d04e375081b54519aa7b84d0b937092e5efa3c75e10fb',
  'AddConcurrencyLimits1795939200011 down':
    '7d6b7896428ec2be1f5b80687d95b643794f1ce7b65a9b9ba2c06a0536cc858a',
  'AddRateLimits1795939200012 up':
    'e27ee5388a572dccb8ec7ffa96f9a683b071bc6bba50ec1555799462cf4f736d',
  'AddRateLimits1795939200012 down':
    'e7c365e4a9048c5ff5ce66c3785a2ba6c1eddeef371aef3123ae970bb710c7ec',
  'AddUniquenessPolicies1795939200013 up':
    '8044ee4bd0e9041b4b2920ac4b6c43c3788db70170fb4dfe18a931d0230caae3',
  'AddUniquenessPolicies1795939200013 down':
    '5659258220a7128315485b8fe0ccc447dba398d61d9e875c7780394e2d1d5148',
  'PruneAtQueueTime1795939200014 up':
    '4b2e7ebe9a3f1c6cfce33cc25dc17967a9997616af444d007962ff4331a1780f',
  'PruneAtQueueTime1795939200014 down':
    'dc446cabf6263b6dba29f8658712af4d31310aa146a2e2dffab58b6fff1b680d',
  'AddJobMeta1795939200015 up': '95cb35035042a118e2fdf92503d5994a2764d51e5a072d00869d27dc33997cbb',
  'AddJobMeta1795939200015 down':
    '90f3bb6de2dfdf36b6aa4498957f64e1c8496c3ea846290697aeced639d7d7f5',
  'AddJobListIndexes1795939200016 up':
    '03bff9bd102ff465f53375d33a1c9da17bc1de01bd3f885cd3e4480b4905cf3f',
  'AddJobListIndexes1795939200016 down':
    '5f6a90bbea8f740a4f96d7d50ac21cc511870af3eb742b1c6ff959684049fde3',
  'AddJobDependencies1795939200017 up':
    'd24e6b28550911a23fdb0ec94665a802c0cad247372a74727750b3264f9d00e1',
  'AddJobDependencies1795939200017 down':
    'b0c86d07aa03bf3ee04823892aee925668bd132cef9812d3d03c160e4618d0e9',
  'AddDeadLetters1795939200018 up':
    '3c870f5734eb885f8f7d27c7f5d4ad69ba7cd4e367f44e5a35686ffd56047f1e',
  'AddDeadLetters1795939200018 down':
    '409afeaf4c128458237af4bc65c981965a1d5b515367ef706106923522fc5dbc',
  'CountEachDependencyOnce1795939200019 up':
    'f0f429c8ccb3ee3e8bf4b7e938f7921cd3864544ce6202a712d4cd603f201273',
  'CountEachDependencyOnce1795939200019 down':
    'baa0db38d84a69d5230a3300b1d335cb692fcfeef341763e6ad146b184cbbc50',
  'PrunePastKeptJobs1795939200020 up':
    '4856a94fca7b82a8ebfe329888527ce0b239ebb91416de8153ba61923feb4a92',
  'PrunePastKeptJobs1795939200020 down':
    '901b2e4866bd59f717680c49137cb8316f7e307fae4195abf22324527aa2267d',
  'AddDebounceSuccessors1795939200021 up':
    'f9632f5f877a8f744ac16e3e0631f9e74db16e2fd7c22c8b1e2b75acbbd04c80',
  'AddDebounceSuccessors1795939200021 down':
    'a322f6dc58fe34d9d5f35957971790ab02e0a7bdcbfc546ea8c07497943dd8e2',
};

/** A QueryRunner that records what it is sent and answers the migrations' few look-ups. */
function recordingRunner(sent: unknown[]): QueryRunner {
  const query = async (sql: string, parameters?: unknown[]) => {
    sent.push([sql, parameters ?? null]);
    // CreateJobsTable asks whether the schema exists (up) and whether it made it (down);
    // schemaMigration reads search_path.
    return [{ present: false, ours: true, path: '"$user", public' }];
  };
  return { query } as unknown as QueryRunner;
}

async function statementsHash(run: (runner: QueryRunner) => Promise<void>): Promise<string> {
  const sent: unknown[] = [];
  await run(recordingRunner(sent));
  return createHash('sha256').update(JSON.stringify(sent)).digest('hex');
}

describe('shipped migrations', () => {
  it('send the statements they shipped with, byte for byte', async () => {
    const hashes: Record<string, string> = {};
    for (const Migration of jobQueueMigrationsFor()) {
      const migration = new Migration();
      hashes[`${migration.name} up`] = await statementsHash((r) => migration.up(r));
      hashes[`${migration.name} down`] = await statementsHash((r) => migration.down(r));
    }
    const changed = Object.keys(SHIPPED).filter(
      (key) => key in hashes && hashes[key] !== SHIPPED[key],
    );
    if (changed.length > 0) {
      throw new Error(
        `Shipped migrations now send other SQL: ${changed.join(', ')}. Put the old text back ` +
          '(a shared part that changed must not be shared) and change the schema in a new migration.',
      );
    }
    expect(hashes).toEqual(SHIPPED);
  });
});
