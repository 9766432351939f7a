import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { SERVER_URL_ENV, withAdminClient } from './database';

/** Runs one statement (a fresh connection each time) and returns its rows. */
export type TestSql = <T = Record<string, unknown>>(
  text: string,
  params?: unknown[],
) => Promise<T[]>;

/** `TestSql` on `url`: the test's own statements, as that URL's role. */
export function sqlOn(url: string): TestSql {
  return async <T>(text: string, params: unknown[] = []): Promise<T[]> => {
    const client = new Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query(text, params)).rows as T[];
    } finally {
      await client.end();
    }
  };
}

/** `url` with `role` and its password as the user. */
function urlAs(url: string, role: string, password: string): string {
  const parsed = new URL(url);
  parsed.username = role;
  parsed.password = password;
  return parsed.toString();
}

export interface TestRole {
  name: string;
  /** The database's URL as this role. */
  url: string;
  /** Drops the role; its database must be gone, or hold nothing of the role's (DROP OWNED). */
  drop(): Promise<void>;
}

/**
 * A login role with no other attribute, named `<prefix>_<random hex>`: roles belong to the whole
 * server, so each test file run makes its own and drops it in afterAll.
 */
export async function createTestRole(prefix: string, databaseUrl: string): Promise<TestRole> {
  const serverUrl = process.env[SERVER_URL_ENV];
  if (!serverUrl) throw new Error(`${SERVER_URL_ENV} is unset: run the tests through jest.`);
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  // A password of its own: the machine's server trusts local connections, but the embedded
  // fallback asks for one (scram-sha-256).
  const password = randomBytes(12).toString('hex');
  // Name and password are ours (a fixed prefix and hex), never input: neither can be a parameter.
  await withAdminClient(serverUrl, (client) =>
    client.query(
      `CREATE ROLE ${name} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD '${password}'`,
    ),
  );
  return {
    name,
    url: urlAs(databaseUrl, name, password),
    drop: () =>
      withAdminClient(serverUrl, (client) => client.query(`DROP ROLE IF EXISTS ${name}`)).then(
        () => undefined,
      ),
  };
}
