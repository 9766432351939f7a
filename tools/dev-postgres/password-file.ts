import { randomBytes } from 'node:crypto';
import { chownSync, linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { EmbeddedPostgresError } from './errors';
import { ServerAccount } from './server-account';

/**
 * The superuser's password lives in this file of the cluster's folder: made at random by the
 * first initdb, read back at every start. The folder is 0700 and the file 0600, both the server
 * account's: only that account (and root) can read it.
 */
export const PASSWORD_FILE = 'embedded-superuser-password';

/** Every cluster's password before the password file: such a cluster gets a random one. */
const LEGACY_PASSWORD = 'postgres';

export const randomPassword = (): string => randomBytes(24).toString('base64url');

/** The cluster's password from its file; undefined when it has none (a cluster from before it). */
export function readPassword(dataDir: string): string | undefined {
  try {
    return readFileSync(join(dataDir, PASSWORD_FILE), 'utf8').trim() || undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Keeps `password` in the cluster's file, unless a start running at the same time kept one first,
 * and returns the one kept. Written beside it, then linked in: the file is never half written.
 */
export function keepPassword(
  dataDir: string,
  password: string,
  account: ServerAccount | undefined,
): string {
  const file = join(dataDir, PASSWORD_FILE);
  const partial = `${file}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
  writeFileSync(partial, `${password}\n`, { mode: 0o600, flag: 'wx' });
  try {
    if (account) chownSync(partial, account.uid, account.gid);
    linkSync(partial, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    rmSync(partial, { force: true });
  }
  return readPassword(dataDir)!;
}

/**
 * The superuser's URL of the embedded cluster in `dataDir` on `port`, with the password in its
 * file (or, for a cluster from before it that has not started since, the former fixed one).
 */
export function embeddedPostgresUrl(dataDir: string, port: number): string {
  const password = encodeURIComponent(readPassword(dataDir) ?? LEGACY_PASSWORD);
  return `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
}

/** A connection as the superuser with `password`; undefined when the server refuses it. */
async function logIn(port: number, password: string): Promise<Client | undefined> {
  const client = new Client({ host: '127.0.0.1', port, user: 'postgres', password });
  try {
    await client.connect();
    return client;
  } catch (error) {
    await client.end().catch(() => undefined);
    // invalid_password: the server runs, the password is not the cluster's.
    if ((error as { code?: string }).code === '28P01') return undefined;
    throw error;
  }
}

/**
 * Checks that the password in the cluster's file logs in. A cluster made before the file still
 * has the fixed password 'postgres': it gets the file's instead. (The file is written first, so a
 * crash in between leaves a cluster this fixes at its next start.)
 */
export async function adoptPassword(
  dataDir: string,
  port: number,
  password: string,
): Promise<void> {
  const client = await logIn(port, password);
  if (client) return client.end();
  const legacy = await logIn(port, LEGACY_PASSWORD);
  if (!legacy) {
    const file = join(dataDir, PASSWORD_FILE);
    throw new EmbeddedPostgresError(
      `The embedded PostgreSQL in ${dataDir} refuses the password in ${file} and the former ` +
        'fixed one: put its password in that file, delete the folder to start afresh (its jobs ' +
        'are lost), or set DATABASE_URL',
    );
  }
  try {
    await legacy.query(`ALTER ROLE postgres PASSWORD ${legacy.escapeLiteral(password)}`);
  } finally {
    await legacy.end();
  }
}
