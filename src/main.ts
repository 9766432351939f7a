import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { adminTokenForThisRun } from './common/admin-token';

/**
 * The example app: reads DATABASE_URL (`npm start` gives it a development database when it is
 * unset, see tools/dev-postgres), serves on 127.0.0.1:$PORT (default 3000). On Ctrl-C or
 * SIGTERM, Nest's shutdown hooks close the app: the worker stops claiming, lets running jobs
 * finish and hands back the rest.
 */
async function bootstrap(): Promise<void> {
  const authorization = adminTokenForThisRun();
  // abortOnError: false, so a failed boot throws (and is logged below) instead of process.abort().
  const app = await NestFactory.create(AppModule, { abortOnError: false });
  app.enableShutdownHooks(['SIGINT', 'SIGTERM', 'SIGHUP']);
  await app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1');
  const url = await app.getUrl();
  const logger = new Logger('Example');
  logger.log(`Listening on ${url}`);
  logger.log(
    `Try: curl -s -X POST ${url}/images -H 'content-type: application/json' ` +
      `-d '{"name":"cat.png"}' && curl -s -H ${authorization} "${url}/jobs/stats?maxAgeMs=0"`,
  );
  logger.log(`Dashboard: ${url}/sign-in (sign in with the admin token)`);
}

bootstrap().catch((error: unknown) => {
  new Logger('Example').error(error instanceof Error ? (error.stack ?? error.message) : error);
  process.exit(1);
});
