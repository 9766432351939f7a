import { execFile, execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const REPO = resolve(__dirname, '..', '..');
const PACKAGE = join(REPO, 'libs', 'job-queue');
/** The peers a scratch folder installs beside the tarball, at the repo's own versions. */
const PEERS = [
  '@nestjs/common',
  '@nestjs/core',
  '@nestjs/schedule',
  '@nestjs/typeorm',
  'typeorm',
  'pg',
  'reflect-metadata',
  'rxjs',
];

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  ms: number;
}

export interface PackedCli {
  /** The scratch folder the tarball is installed in. */
  dir: string;
  /**
   * The installed bin (`node_modules/.bin/nest-pg-job-queue`, what npx runs) with `args`, run by
   * node in the scratch folder: npx's own start-up (half a second) spared for most runs.
   */
  run(args: string[], env?: NodeJS.ProcessEnv): Promise<CliRun>;
  /** `npx --no-install nest-pg-job-queue ...args` in the scratch folder. */
  npx(args: string[], env?: NodeJS.ProcessEnv): Promise<CliRun>;
  /** A shell line (`npx nest-pg-job-queue …`) run by bash in the scratch folder. */
  shell(line: string, env?: NodeJS.ProcessEnv): Promise<CliRun>;
  remove(): void;
}

/**
 * The package as users get it: compiled from the working tree into a staging folder (the repo's
 * libs/job-queue/dist is left alone; type errors are lint's business), packed with `npm pack`,
 * and installed with its peers into a scratch folder outside the repo (`--prefer-offline`: from
 * the npm cache when it has them).
 */
export function installPackedCli(): PackedCli {
  const root = mkdtempSync(join(tmpdir(), 'jq-cli-'));
  const stage = join(root, 'stage');
  mkdirSync(stage);
  for (const file of ['package.json', 'README.md', 'CHANGELOG.md', 'LICENSE', 'bin']) {
    cpSync(join(PACKAGE, file), join(stage, file), { recursive: true });
  }
  const tsc = join(REPO, 'node_modules', '.bin', 'tsc');
  try {
    execFileSync(tsc, ['-p', join(PACKAGE, 'tsconfig.lib.json'), '--outDir', join(stage, 'dist')], {
      stdio: 'pipe',
    });
  } catch {
    // Emitted all the same; `npm run lint` type-checks.
  }
  const packed = execFileSync(
    'npm',
    ['pack', stage, '--ignore-scripts', '--pack-destination', root, '--json'],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const tarball = join(root, (JSON.parse(packed) as Array<{ filename: string }>)[0].filename);
  const dir = join(root, 'scratch');
  mkdirSync(dir);
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'scratch', private: true }));
  const peers = PEERS.map((peer) => {
    const manifest = join(REPO, 'node_modules', peer, 'package.json');
    return `${peer}@${(JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version}`;
  });
  execFileSync(
    'npm',
    [
      'install',
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      '--loglevel=error',
      tarball,
      ...peers,
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  const spawn = (file: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliRun> =>
    new Promise((done) => {
      const started = performance.now();
      execFile(
        file,
        args,
        { cwd: dir, env: { ...process.env, ...env } },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          done({ code, stdout, stderr, ms: performance.now() - started });
        },
      );
    });
  return {
    dir,
    run: (args, env = {}) =>
      spawn(
        process.execPath,
        [join(dir, 'node_modules', '.bin', 'nest-pg-job-queue'), ...args],
        env,
      ),
    npx: (args, env = {}) => spawn('npx', ['--no-install', 'nest-pg-job-queue', ...args], env),
    shell: (line, env = {}) => spawn('bash', ['-c', line], env),
    remove: () => rmSync(root, { recursive: true, force: true }),
  };
}
