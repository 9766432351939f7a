import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { SERVER_ACCOUNT } from '../../tools/dev-postgres';
import { OwnPostgres } from '../support/own-postgres';

const asRoot = process.getuid?.() === 0;

function uidOf(account: string): number | undefined {
  try {
    return Number(execFileSync('id', ['-u', account], { encoding: 'utf8', stdio: 'pipe' }));
  } catch {
    return undefined;
  }
}

/** The real uid of a running process, from /proc. */
function processUid(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Uid:'))!;
  return Number(line.split(/\s+/)[1]);
}

/** The machine's own clusters (Debian's layout: /var/lib/postgresql/<version>/<name>). */
function machineClusters(): string[] {
  const base = '/var/lib/postgresql';
  if (!existsSync(base)) return [];
  return readdirSync(base).flatMap((version) =>
    existsSync(join(base, version))
      ? readdirSync(join(base, version))
          .map((name) => join(base, version, name))
          .filter((dir) => existsSync(join(dir, 'PG_VERSION')))
      : [],
  );
}

/**
 * As root, `npm start`'s development server (and the tests' embedded one) runs as an account of
 * its own, not the distribution's `postgres`: its superuser, and so an injection in the example,
 * cannot read another cluster's files. Checked as the server itself sees them, with
 * pg_stat_file(), on the machine's clusters and on a stand-in owned by another account (so the
 * test means something on a machine without a PostgreSQL of its own).
 */
(asRoot ? describe : describe.skip)('dev-postgres: the server account, as root', () => {
  let own: OwnPostgres;
  let client: Client;
  let standIn: string;

  beforeAll(async () => {
    own = await OwnPostgres.start();
    client = new Client({ connectionString: own.serverUrl });
    await client.connect();
    // A cluster folder of another account (postgres when there is one, else nobody), mode 0700.
    standIn = mkdtempSync(join(tmpdir(), 'job-queue-other-cluster-'));
    chmodSync(standIn, 0o755);
    const other = join(standIn, 'main');
    mkdirSync(other, { mode: 0o700 });
    writeFileSync(join(other, 'PG_VERSION'), '15\n');
    const owner = uidOf('postgres') ?? 65534;
    chownSync(other, owner, owner);
    chownSync(join(other, 'PG_VERSION'), owner, owner);
  });

  afterAll(async () => {
    await client?.end();
    await own?.destroy();
    if (standIn) rmSync(standIn, { recursive: true, force: true });
  });

  const statFile = async (path: string) =>
    client.query('SELECT size FROM pg_stat_file($1)', [path]).then(
      () => 'read',
      (error: Error) => error.message,
    );

  it(`runs the server as ${SERVER_ACCOUNT}, neither root nor the distribution's postgres`, () => {
    const pid = Number(readFileSync(join(own.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const uid = processUid(pid);
    expect(uid).toBe(uidOf(SERVER_ACCOUNT));
    expect(uid).not.toBe(0);
    expect(uid).not.toBe(uidOf('postgres'));
  });

  it('reads its own data folder (the check below can succeed)', async () => {
    expect(await statFile(join(own.dataDir, 'PG_VERSION'))).toBe('read');
  });

  it("cannot read another cluster's data folder", async () => {
    const others = [...machineClusters(), join(standIn, 'main')];
    const results = await Promise.all(
      others.map(async (dir) => [dir, await statFile(join(dir, 'PG_VERSION'))]),
    );
    for (const [dir, result] of results) {
      expect([dir, result]).toEqual([dir, expect.stringMatching(/permission denied/i)]);
    }
  });
});
