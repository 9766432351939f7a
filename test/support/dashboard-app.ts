import {
  CanActivate,
  ExecutionContext,
  INestApplication,
  Injectable,
  Module,
} from '@nestjs/common';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { TypeOrmModule } from '@nestjs/typeorm';
import { Client } from 'pg';
import { JobContext, JobHandler, JobQueueModule, QueueService } from 'nest-pg-job-queue';
import { JobQueueDashboardModule } from 'nest-pg-job-queue/dashboard';
import { CapturingLogger } from './capturing-logger';
import { createTestDatabase, TestDatabase } from './database';
import { Gate } from './gate';

export type Platform = 'express' | 'fastify';

/** The header the tests' guard wants, and its value. */
export const ADMIN_HEADER = 'x-test-admin';
export const ADMIN_VALUE = 'yes';

/** Lets a request through only with `x-test-admin: yes`: a guard the app would have. */
@Injectable()
export class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    return req.headers[ADMIN_HEADER] === ADMIN_VALUE;
  }
}

/** A provider a guard class depends on, given through `registerAsync`'s imports. */
@Injectable()
export class AdminPolicy {
  readonly allowed = ADMIN_VALUE;
}

@Module({ providers: [AdminPolicy], exports: [AdminPolicy] })
export class AdminPolicyModule {}

/** A guard class with a dependency, made by the dashboard's module. */
@Injectable()
export class PolicyGuard implements CanActivate {
  constructor(private readonly policy: AdminPolicy) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    return req.headers[ADMIN_HEADER] === this.policy.allowed;
  }
}

/** Gates the `dashboard.steps` job passes; a test opens them. */
export class StepGates {
  first = new Gate();
  second = new Gate();
}

/** The tests' handlers: a job that reports progress in steps a test releases. */
@Injectable()
export class DashboardTestHandlers {
  constructor(private readonly gates: StepGates) {}

  @JobHandler('dashboard.steps')
  async steps(_data: unknown, ctx: JobContext): Promise<{ done: string }> {
    await ctx.progress(30, 'first <b>stage</b>');
    await this.gates.first.wait(ctx.signal);
    await ctx.log('halfway <script>alert(1)</script>');
    await ctx.progress(60, 'second');
    await this.gates.second.wait(ctx.signal);
    return { done: '<img src=x onerror=alert(1)>' };
  }
}

export interface DashboardApp {
  app: INestApplication;
  queue: QueueService;
  db: TestDatabase;
  sql: Client;
  gates: StepGates;
  logger: CapturingLogger;
  /** `http://127.0.0.1:<port>`. */
  url: string;
  close(): Promise<void>;
}

/**
 * An app on `platform` with the queue (a worker for `dashboard.steps` only) and five dashboards:
 * `/queue` behind `HeaderGuard` (an instance), `/refused` without a guard, `/denied` behind a
 * guard that always says no, `/open` with `unsafeAllowAnonymous`, and `/async/queue` from
 * `registerAsync` behind `PolicyGuard` (a class with a dependency from its `imports`).
 * `bodyParser: false` creates the app without Nest's body parsers.
 */
export async function startDashboardApp(
  platform: Platform,
  { bodyParser = true }: { bodyParser?: boolean } = {},
): Promise<DashboardApp> {
  const db = await createTestDatabase();
  const logger = new CapturingLogger();
  const gates = new StepGates();
  const builder = Test.createTestingModule({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url: db.url, retryAttempts: 0 }),
      // A stats snapshot at most a few tenths of a second old: the overview shows new types soon.
      JobQueueModule.forRoot({
        worker: { pollIntervalMs: 100 },
        progressThrottleMs: 0,
        statsIntervalMs: 100,
      }),
      JobQueueDashboardModule.register({ path: '/queue', guard: new HeaderGuard() }),
      JobQueueDashboardModule.register({ path: '/refused' }),
      JobQueueDashboardModule.register({ path: '/denied', guard: { canActivate: () => false } }),
      JobQueueDashboardModule.register({ path: '/open', unsafeAllowAnonymous: true }),
      JobQueueDashboardModule.registerAsync({
        path: '/async/queue',
        imports: [AdminPolicyModule],
        inject: [AdminPolicy],
        useFactory: (policy: AdminPolicy) => ({
          guard: PolicyGuard,
          title: `Async ${policy.allowed}`,
        }),
      }),
    ],
    providers: [DashboardTestHandlers, { provide: StepGates, useValue: gates }],
  }).setLogger(logger);
  const sql = new Client({ connectionString: db.url });
  let app: INestApplication | undefined;
  try {
    const moduleRef = await builder.compile();
    app =
      platform === 'fastify'
        ? moduleRef.createNestApplication(new FastifyAdapter(), { logger, bodyParser })
        : moduleRef.createNestApplication({ logger, bodyParser });
    await app.listen(0, '127.0.0.1');
    await sql.connect();
  } catch (error) {
    await app?.close().catch(() => undefined);
    await db.drop();
    throw error;
  }
  const url = (await app.getUrl()).replace('[::1]', '127.0.0.1').replace('localhost', '127.0.0.1');
  return {
    app,
    queue: app.get(QueueService),
    db,
    sql,
    gates,
    logger,
    url,
    close: async () => {
      gates.first.open();
      gates.second.open();
      await app.close();
      await sql.end();
      await db.drop();
    },
  };
}
