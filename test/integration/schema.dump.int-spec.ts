import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import {
  readSchemaDump,
  SCHEMA_DUMP_COMMAND,
  SCHEMA_DUMP_FILE,
} from '../../libs/job-queue/scripts/schema-dump';
import { createTestDatabase, TestDatabase } from '../support/database';

const COMMITTED_PATH = `libs/job-queue/${SCHEMA_DUMP_FILE}`;
const COMMITTED = join(__dirname, '..', '..', COMMITTED_PATH);

/** Where two texts first part, with a few lines of each around it. */
function firstDifference(expected: string, actual: string): string {
  const want = expected.split('\n');
  const got = actual.split('\n');
  let line = 0;
  while (line < Math.max(want.length, got.length) && want[line] === got[line]) line++;
  const around = (lines: string[]) =>
    lines
      .slice(Math.max(0, line - 2), line + 3)
      .map((text) => `    ${text}`)
      .join('\n');
  return (
    `first difference at line ${line + 1}:\n` +
    `  ${COMMITTED_PATH}:\n${around(want)}\n  the migrations:\n${around(got)}`
  );
}

/**
 * libs/job-queue/schema.sql is what the migrations install: a migration that changes the schema
 * changes the dump in the same commit, and a reader of the dump sees the schema as it is.
 */
describe('schema dump', () => {
  let db: TestDatabase;
  let client: Client;

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new Client({ connectionString: db.url });
    await client.connect();
  });

  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('matches what the migrations install (run `npm run schema:dump` after changing them)', async () => {
    const installed = await readSchemaDump(client, 'job_queue');
    const committed = readFileSync(COMMITTED, 'utf8');
    if (installed !== committed) {
      throw new Error(
        `${COMMITTED_PATH} differs from what the migrations install; ` +
          `regenerate it with \`${SCHEMA_DUMP_COMMAND}\` and commit it.\n` +
          firstDifference(committed, installed),
      );
    }
  });
});
