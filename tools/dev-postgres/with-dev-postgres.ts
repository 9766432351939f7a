/**
 * `npm start`: runs the example app (the script given, `dist/src/main.js`) with a development
 * database. With DATABASE_URL set it only runs the app. Otherwise it starts an embedded
 * PostgreSQL whose data lives in ./.data/postgres (or EMBEDDED_PG_DATA_DIR, port EMBEDDED_PG_PORT,
 * default 54329), so jobs survive a restart, and gives the app its URL. As root in a private
 * folder (a clone in /root) the server's account cannot reach ./.data, so the data lives in
 * /var/lib/nest-pg-job-queue/<project>-<hash>/postgres instead.
 *
 * The app knows nothing of this: it is a plain Nest app that reads DATABASE_URL and closes itself
 * on a signal (enableShutdownHooks). This process outlives it so the database is still up while
 * the worker hands back its jobs, and stops the database after.
 *
 *   node dist/tools/dev-postgres/with-dev-postgres.js dist/src/main.js
 */
import { ChildProcess, spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { embeddedDataDir } from './data-dir';
import { EmbeddedPostgresServer, startEmbeddedPostgres } from './embedded-postgres';
import { EmbeddedPostgresError } from './errors';

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

function log(message: string): void {
  process.stdout.write(`[dev-postgres] ${message}\n`);
}

async function startDatabase(): Promise<EmbeddedPostgresServer | undefined> {
  if (process.env.DATABASE_URL) return undefined;
  const dataDir = process.env.EMBEDDED_PG_DATA_DIR
    ? resolve(process.env.EMBEDDED_PG_DATA_DIR)
    : await embeddedDataDir(resolve('.data/postgres'));
  const server = await startEmbeddedPostgres({
    dataDir,
    port: Number(process.env.EMBEDDED_PG_PORT ?? 54329),
    // A terminal's Ctrl-C must not stop it before the app has handed back its jobs.
    detached: true,
  });
  log(`Embedded PostgreSQL started (data in ${dataDir})`);
  return server;
}

/**
 * The app in a process group of its own: a terminal's Ctrl-C reaches only us, and the app gets
 * exactly one signal, from us. (Nest's shutdown hooks stop listening after the first one, so a
 * second, from the terminal, would kill it mid-drain.)
 */
function runApp(script: string, args: string[], databaseUrl: string | undefined): ChildProcess {
  return spawn(process.execPath, [script, ...args], {
    detached: true,
    stdio: 'inherit',
    env: databaseUrl ? { ...process.env, DATABASE_URL: databaseUrl } : process.env,
  });
}

async function main(): Promise<number> {
  const [script, ...args] = process.argv.slice(2);
  if (!script) throw new Error('usage: with-dev-postgres <app script> [args…]');
  const server = await startDatabase();
  const app = runApp(script, args, server?.url);
  let forwarded: NodeJS.Signals | undefined;
  for (const signal of SIGNALS) {
    process.on(signal, () => {
      if (forwarded) return;
      forwarded = signal;
      app.kill(signal);
    });
  }
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => {
    app.once('exit', (exitCode, exitSignal) => done([exitCode, exitSignal]));
    app.once('error', () => done([1, null]));
  });
  try {
    await server?.stop();
  } catch (error) {
    log(`Stopping embedded PostgreSQL: ${(error as Error).message}`);
    return 1;
  }
  // The app re-raises the signal it closed on: that is a clean stop we asked for.
  if (signal !== null) return signal === forwarded ? 0 : 1;
  return code ?? 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    // An EmbeddedPostgresError is one line saying why and what to do: its stack would only bury it.
    log(
      error instanceof EmbeddedPostgresError
        ? error.message
        : error instanceof Error
          ? (error.stack ?? error.message)
          : String(error),
    );
    process.exit(1);
  },
);
