import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { join } from 'node:path';
import { AppModule } from './app.module';
import { startEmbeddedPostgres } from './database/embedded-postgres';

const logger = new Logger('Example');

/**
 * `npm start`: the example app. Uses DATABASE_URL when set; otherwise starts an embedded
 * PostgreSQL whose data lives in ./.data/postgres, so jobs survive a restart.
 */
async function bootstrap(): Promise<void> {
  const embedded = process.env.DATABASE_URL
    ? undefined
    : await startEmbeddedPostgres({
        dataDir: join(process.cwd(), '.data', 'postgres'),
        port: Number(process.env.EMBEDDED_PG_PORT ?? 54329),
      });
  if (embedded) {
    process.env.DATABASE_URL = embedded.url;
    logger.log(`Embedded PostgreSQL started (data in .data/postgres)`);
  }
  const app = await NestFactory.create(AppModule);
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, '127.0.0.1');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: draining jobs and shutting down`);
    // Close the app first: the worker hands back its jobs while the database is still up.
    await app.close();
    await embedded?.stop();
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));

  const url = `http://127.0.0.1:${port}`;
  logger.log(`Listening on ${url}`);
  logger.log(
    `Try: curl -s -X POST ${url}/images -H 'content-type: application/json' ` +
      `-d '{"name":"cat.png"}' && curl -s ${url}/jobs/stats`,
  );
}

bootstrap().catch((error: unknown) => {
  logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
