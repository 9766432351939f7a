import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { ANONYMOUS_AT_BOOT, NO_GUARD_AT_BOOT } from './dashboard.messages';
import type { ResolvedDashboardOptions } from './dashboard.options';

const FORM = 'application/x-www-form-urlencoded';
/** The largest form body read: the dashboard's forms hold a token and nothing else. */
const FORM_BODY_LIMIT = 16 * 1024;

/** The part of a Fastify instance used here (the package does not depend on fastify). */
interface FastifyParsers {
  hasContentTypeParser(type: string): boolean;
  addContentTypeParser(
    type: string,
    options: { parseAs: 'string'; bodyLimit: number },
    parser: (
      req: unknown,
      body: string,
      done: (error: Error | null, body?: unknown) => void,
    ) => void,
  ): void;
}

/**
 * What the dashboard checks once, as the app starts: a warning when it refuses everything (no
 * guard) or serves anyone, and a form parser on Fastify when the app has none. Nest's Fastify
 * adapter registers one unless the app was created with `bodyParser: false`; Express's adapter
 * has no such hook (there, keep Nest's body parser, or send the token in `x-csrf-token`).
 */
@Injectable()
export class DashboardBoot implements OnModuleInit {
  constructor(
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onModuleInit(): void {
    const logger = new Logger('JobQueueDashboard');
    if (!this.options.guard) {
      logger.warn(
        this.options.unsafeAllowAnonymous
          ? ANONYMOUS_AT_BOOT(this.options.path)
          : NO_GUARD_AT_BOOT(this.options.path),
      );
    }
    const adapter = this.adapterHost.httpAdapter;
    if (adapter?.getType() !== 'fastify') return;
    const fastify = adapter.getInstance<FastifyParsers>();
    if (fastify.hasContentTypeParser(FORM)) return;
    fastify.addContentTypeParser(
      FORM,
      { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
      (_req, body, done) => done(null, Object.fromEntries(new URLSearchParams(body))),
    );
  }
}
