import { INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { InvalidJobQueueOptionsError } from '../errors';
import { JobQueueModule } from '../job-queue.module';
import { QueueService } from '../queue.service';
import { queueSchema } from '../sql/queue-schema';
import { schemaOption } from '../options/schema.option';
import { CliError, UsageError } from './cli.errors';
import { plain } from './terminal';

/** How long the first connection may take before the CLI says the database does not answer. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Where the CLI connects: `--url` or DATABASE_URL, and the queue's `--schema`. */
export interface Target {
  url: string;
  schema: string | undefined;
}

/** The database a URL names, for messages: host, port and database, never the password. */
export function describeTarget(url: string): string {
  const parsed = new URL(url);
  const database = decodedOrNot(parsed.pathname.slice(1)) || '(default database)';
  return plain(`${parsed.hostname || 'localhost'}:${parsed.port || '5432'}/${database}`);
}

/** A URL part %-decoded, or `undefined` when its %-escapes are not UTF-8 (`%zz`, `%ff`). */
function decodedOrNot(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** `--url`, else DATABASE_URL; a usage error without either or for a URL that is none. */
export function resolveTarget(
  url: string | undefined,
  schema: string | undefined,
  env: NodeJS.ProcessEnv,
): Target {
  const chosen = url ?? env.DATABASE_URL;
  if (!chosen) {
    throw new UsageError('no database: set DATABASE_URL or pass --url postgres://user@host/db');
  }
  let parsed: URL;
  try {
    parsed = new URL(chosen);
  } catch {
    throw new UsageError(
      `${url ? '--url' : 'DATABASE_URL'} is not a URL (postgres://user@host:5432/db)`,
    );
  }
  const source = url ? '--url' : 'DATABASE_URL';
  if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
    throw new UsageError(`${source} is not a postgres:// URL`);
  }
  // The driver decodes these too, and would fail with a bare "URI malformed".
  for (const [part, text] of [
    ['user name', parsed.username],
    ['password', parsed.password],
    ['database name', parsed.pathname.slice(1)],
  ]) {
    if (decodedOrNot(text) === undefined) {
      throw new UsageError(
        `${source}: the ${part} has a bad %-escape (write a literal % as %25, and other ` +
          'characters as their UTF-8 bytes, %C3%A9 for é)',
      );
    }
  }
  return { url: chosen, schema };
}

/** TypeORM's options for the CLI's one connection pool: no retries, no entities, no logs. */
export function dataSourceOptions(target: Target) {
  return {
    type: 'postgres' as const,
    url: target.url,
    connectTimeoutMS: CONNECT_TIMEOUT_MS,
    extra: { max: 2 },
    logging: false,
  };
}

/** Why a connection failed, in words, from the driver's error (its code or server message). */
export function connectionFailure(target: Target, error: unknown): CliError {
  const { code, message } = (error ?? {}) as { code?: string; message?: string };
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found',
    EAI_AGAIN: 'host not found',
    ETIMEDOUT: 'timed out',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
    ECONNRESET: 'connection reset',
  };
  // A SQLSTATE is the server's answer (57014: a statement_timeout in the URL's options, say):
  // its message says what happened, even when it mentions a timeout.
  const answered = code !== undefined && /^[0-9A-Z]{5}$/.test(code);
  const reason =
    (code && reasons[code]) ||
    (!answered && /timeout/i.test(message ?? '')
      ? `no answer within ${CONNECT_TIMEOUT_MS / 1_000} s`
      : '') ||
    // A server's refusal (authentication, no such database) names no secret.
    message ||
    code ||
    'unknown error';
  return Object.assign(
    new CliError(
      'unreachable',
      `cannot connect to PostgreSQL at ${describeTarget(target.url)}: ${reason}`,
    ),
    { cause: error },
  );
}

/** The queue's services without a worker or HTTP, and how to close them. */
export interface QueueContext {
  queue: QueueService;
  dataSource: DataSource;
  close(): Promise<void>;
}

@Module({})
class CliModule {}

/**
 * Boots `TypeOrmModule.forRoot` and `JobQueueModule.forRoot({ worker: false })` in a Nest
 * application context, logger off: nothing polls, fires cron or refreshes stats (all of that
 * starts with a worker), and no migration runs. Throws `CliError`s: the database does not
 * answer, or the queue's schema is not there (`migrate` first).
 */
export async function openQueue(target: Target): Promise<QueueContext> {
  let app: INestApplicationContext;
  try {
    app = await NestFactory.createApplicationContext(
      {
        module: CliModule,
        imports: [
          TypeOrmModule.forRoot({ ...dataSourceOptions(target), retryAttempts: 0 }),
          JobQueueModule.forRoot({ worker: false, schema: target.schema }),
        ],
      },
      { logger: false, abortOnError: false },
    );
  } catch (error) {
    if (error instanceof InvalidJobQueueOptionsError)
      throw new UsageError(`--schema: ${error.message}`);
    throw connectionFailure(target, error);
  }
  const context: QueueContext = {
    queue: app.get(QueueService),
    dataSource: app.get(DataSource),
    close: () => app.close(),
  };
  try {
    await checkMigrated(context.dataSource, target.schema);
  } catch (error) {
    await context.close();
    throw error;
  }
  return context;
}

/** The queue's `jobs` table must be there; else the schema was never migrated. */
async function checkMigrated(dataSource: DataSource, schema: string | undefined): Promise<void> {
  const names = queueSchema(schemaOption(schema));
  const [row] = (await dataSource.query(
    `SELECT pg_catalog.to_regclass($1) IS NOT NULL AS present`,
    [names.jobs],
  )) as Array<{ present: boolean }>;
  if (!row.present) throw notMigrated(names.name);
}

/** The schema lacks the queue's tables or a later migration's columns or functions. */
export function notMigrated(schema: string): CliError {
  return new CliError(
    'not_migrated',
    `the queue's schema "${schema}" is not migrated to this version: run \`nest-pg-job-queue migrate\``,
  );
}
