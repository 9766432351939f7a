import { INestApplication, LoggerService } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import request from 'supertest';
import { AppModule } from '../../src/app.module';
import { createTestDatabase, TestDatabase } from './database';

/** The example app's environment knobs (see src/app.module.ts and the handlers). */
export interface ExampleAppEnv {
  WORKER_CONCURRENCY?: number;
  IMAGE_WORK_MS?: number;
  REPORT_STAGE_MS?: number;
  /** How long a monthly report's region job works, in all (src/reports/monthly-report.handlers.ts). */
  REGION_WORK_MS?: number;
  EMAIL_SEND_MS?: number;
  STALE_AFTER_MS?: number;
  REAPER_INTERVAL_MS?: number;
  /** The management routes' token (src/common/admin-token.guard.ts); default: a random one. */
  EXAMPLE_ADMIN_TOKEN?: string;
}

export interface ExampleApp {
  app: INestApplication;
  db: TestDatabase;
  /** The token the management routes (/jobs…) want. */
  adminToken: string;
  /** A supertest agent on the app's HTTP server, as the operator: it sends the admin token. */
  http(): ReturnType<typeof request.agent>;
  /** The same with no Authorization header: any client of the app. */
  anonymous(): ReturnType<typeof request.agent>;
  /** A plain connection to the app's database, for what no route does (a dead worker's claim). */
  sql: Client;
  /** Closes the app (the worker hands back its jobs), the connection and the database. */
  close(): Promise<void>;
}

export interface ExampleAppOptions {
  /** Receives the app's log (e.g. a CapturingLogger); default: errors and warnings on stdout. */
  logger?: LoggerService;
}

/**
 * The example app exactly as `npm start` builds it (`AppModule`), on a fresh database: `DATABASE_URL`
 * and the knobs are set in the environment before the module is built (the factories and handlers
 * read them there) and restored by `close()`.
 */
export async function startExampleApp(
  env: ExampleAppEnv = {},
  options: ExampleAppOptions = {},
): Promise<ExampleApp> {
  const db = await createTestDatabase();
  const settings: Record<string, string> = {
    DATABASE_URL: db.url,
    EXAMPLE_ADMIN_TOKEN: randomBytes(24).toString('base64url'),
  };
  for (const [name, value] of Object.entries(env)) settings[name] = String(value);
  const saved = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
  const restoreEnv = () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
  Object.assign(process.env, settings);

  let app: INestApplication | undefined;
  const sql = new Client({ connectionString: db.url });
  try {
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: options.logger ?? ['error', 'warn'] });
    await app.init();
    await sql.connect();
  } catch (error) {
    await app?.close().catch(() => undefined);
    await sql.end().catch(() => undefined);
    restoreEnv();
    await db.drop();
    throw error;
  }
  const started = app;
  const adminToken = settings.EXAMPLE_ADMIN_TOKEN;
  return {
    app: started,
    db,
    adminToken,
    http: () => request.agent(started.getHttpServer()).set('authorization', `Bearer ${adminToken}`),
    anonymous: () => request.agent(started.getHttpServer()),
    sql,
    close: async () => {
      try {
        await started.close();
        await sql.end();
      } finally {
        restoreEnv();
        await db.drop();
      }
    },
  };
}
