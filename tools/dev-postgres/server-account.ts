import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { EmbeddedPostgresError, oneLine } from './errors';

/**
 * The system account the development server runs as when we are root (PostgreSQL refuses root).
 * Its own, not the distribution's `postgres`: that one owns the machine's clusters, so a server
 * running as it could read and write their files (`pg_read_file`, `COPY … TO PROGRAM`) and an
 * injection in the example would reach them. This account owns nothing but our clusters.
 */
export const SERVER_ACCOUNT = 'nest-pg-job-queue';

/** Its home: where root keeps, per project, what the account must reach but cannot in the project. */
export const ROOT_STATE_BASE = '/var/lib/nest-pg-job-queue';

export interface ServerAccount {
  uid: number;
  gid: number;
}

function lookUp(name: string): ServerAccount | undefined {
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, name], { encoding: 'utf8', stdio: 'pipe' }));
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/** As root, SERVER_ACCOUNT (created when missing, with no login); otherwise undefined: ourselves. */
export function serverAccount(): ServerAccount | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookUp(SERVER_ACCOUNT);
  if (existing) return existing;
  try {
    execFileSync(
      'useradd',
      [
        '--system',
        '--user-group',
        '--no-create-home',
        '--home-dir',
        ROOT_STATE_BASE,
        '--shell',
        '/usr/sbin/nologin',
        '--comment',
        'nest-pg-job-queue development PostgreSQL',
        SERVER_ACCOUNT,
      ],
      { stdio: 'pipe' },
    );
  } catch (error) {
    // Another start may have created it a moment ago.
    if (!lookUp(SERVER_ACCOUNT)) {
      throw new EmbeddedPostgresError(
        `PostgreSQL cannot run as root and the \`${SERVER_ACCOUNT}\` system account to run it as ` +
          `could not be created (${oneLine(error)}): create it (useradd --system --user-group ` +
          `${SERVER_ACCOUNT}), run as another user, or set DATABASE_URL`,
      );
    }
  }
  const created = lookUp(SERVER_ACCOUNT);
  if (!created) {
    throw new EmbeddedPostgresError(
      `The \`${SERVER_ACCOUNT}\` account was created but \`id\` does not find it`,
    );
  }
  return created;
}

/** The nearest folder on the way to `path` that exists (the path itself when it does). */
function nearestExisting(path: string): string {
  let current = path;
  while (!existsSync(current) && dirname(current) !== current) current = dirname(current);
  return current;
}

/**
 * Whether `account` can get to `path` (for a folder: into it; for a file: run it). Asked of the OS
 * as that account, so every parent folder's mode and ACL count: a private (0700) home stops it.
 */
export function canReach(account: ServerAccount, path: string): boolean {
  const result = spawnSync('test', ['-x', nearestExisting(path)], {
    uid: account.uid,
    gid: account.gid,
    stdio: 'ignore',
  });
  return result.status === 0;
}

/**
 * A cluster made before the server had an account of its own belongs to the distribution's
 * `postgres`; PostgreSQL refuses a data folder it does not own, so the folder is handed over once
 * (as root), its data kept.
 */
export function adoptCluster(account: ServerAccount | undefined, dataDir: string): void {
  if (!account || !existsSync(dataDir) || statSync(dataDir).uid === account.uid) return;
  try {
    execFileSync('chown', ['-R', `${account.uid}:${account.gid}`, dataDir], { stdio: 'pipe' });
  } catch (error) {
    throw new EmbeddedPostgresError(
      `${dataDir} belongs to another account and could not be handed to \`${SERVER_ACCOUNT}\` ` +
        `(${oneLine(error)}): chown -R ${SERVER_ACCOUNT}: it, delete it to start afresh, or set DATABASE_URL`,
    );
  }
}
