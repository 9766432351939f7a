import 'reflect-metadata';
import { INestApplication, Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { AppModule } from './app.module';
import { ADMIN_TOKEN_ENV } from './common/admin-token.guard';
import {
  embeddedDataDir,
  EmbeddedPostgresError,
  EmbeddedPostgresServer,
  startEmbeddedPostgres,
} from './database/embedded-postgres';

const logger = new Logger('Example');

/**
 * `npm start`: the example app. Uses DATABASE_URL when set; otherwise starts an embedded
 * PostgreSQL whose data lives in ./.data/postgres (or EMBEDDED_PG_DATA_DIR), so jobs survive a
 * restart. As root in a private folder (a clone in /root) the server's `postgres` user cannot
 * reach ./.data, so the data lives in /var/lib/nest-pg-job-queue/<project>-<hash>/postgres instead.
 *
 * The management routes (/jobs…) want `Authorization: Bearer <token>` with EXAMPLE_ADMIN_TOKEN;
 * when it is unset, a random token for this run is made here and printed in the "Try:" line.
 */
async function bootstrap(): Promise<void> {
  // A token you set is never printed: the curl line names the variable instead.
  const tokenGiven = Boolean(process.env[ADMIN_TOKEN_ENV]);
  if (!tokenGiven) process.env[ADMIN_TOKEN_ENV] = randomBytes(24).toString('base64url');
  const authorization = tokenGiven
    ? `"authorization: Bearer $${ADMIN_TOKEN_ENV}"`
    : `'authorization: Bearer ${process.env[ADMIN_TOKEN_ENV]}'`;

  let embedded: EmbeddedPostgresServer | undefined;
  if (!process.env.DATABASE_URL) {
    const dataDir = process.env.EMBEDDED_PG_DATA_DIR
      ? resolve(process.env.EMBEDDED_PG_DATA_DIR)
      : await embeddedDataDir(resolve('.data/postgres'));
    embedded = await startEmbeddedPostgres({
      dataDir,
      port: Number(process.env.EMBEDDED_PG_PORT ?? 54329),
      // Ctrl-C reaches only us: the server must outlive the app's close (see stopOnSignals).
      detached: true,
    });
    process.env.DATABASE_URL = embedded.url;
    logger.log(`Embedded PostgreSQL started (data in ${dataDir})`);
  }
  let app: INestApplication | undefined;
  try {
    // abortOnError: false, so a failed boot throws (and lands below) instead of process.abort().
    app = await NestFactory.create(AppModule, { abortOnError: false });
    await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  } catch (error) {
    // Never leave the embedded server running behind a failed start.
    await app?.close().catch(() => undefined);
    await embedded?.stop();
    throw error;
  }
  stopOnSignals(app, embedded);

  const url = await app.getUrl();
  logger.log(`Listening on ${url}`);
  logger.log(
    `Try: curl -s -X POST ${url}/images -H 'content-type: application/json' ` +
      `-d '{"name":"cat.png"}' && curl -s -H ${authorization} "${url}/jobs/stats?maxAgeMs=0"`,
  );
}

/**
 * Ctrl-C, SIGTERM, a closed terminal: close the app first (the worker hands back its jobs while
 * the database is still up), then the embedded database.
 */
function stopOnSignals(app: INestApplication, embedded?: EmbeddedPostgresServer): void {
  let closing = false;
  const shutdown = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: draining jobs and shutting down`);
    let code = 0;
    try {
      await app.close();
    } catch (error) {
      logger.error(`Shutdown: ${(error as Error).message}`);
      code = 1;
    }
    try {
      await embedded?.stop();
    } catch (error) {
      logger.error(`Stopping embedded PostgreSQL: ${(error as Error).message}`);
      code = 1;
    }
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void shutdown(signal));
  }
}

bootstrap().catch((error: unknown) => {
  // An EmbeddedPostgresError is one line saying why and what to do: its stack would only bury it.
  const text =
    error instanceof EmbeddedPostgresError
      ? error.message
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  logger.error(text);
  process.exit(1);
});
