import { Inject, Injectable } from '@nestjs/common';
import { ApplicationConfig, HttpAdapterHost } from '@nestjs/core';
import { DASHBOARD_OPTIONS, SECURITY_HEADERS } from './dashboard.constants';
import type { ResolvedDashboardOptions } from './dashboard.options';

/** What the dashboard reads of a request, on Express and on Fastify alike. */
export interface DashboardRequest {
  headers: Record<string, string | string[] | undefined>;
  body?: unknown;
  protocol?: string;
}

/**
 * Responses through Nest's HTTP adapter, so that one controller serves Express and Fastify: the
 * two have different response objects, the adapter speaks to both.
 */
@Injectable()
export class DashboardHttp {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly appConfig: ApplicationConfig,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  private get adapter() {
    return this.adapterHost.httpAdapter;
  }

  /**
   * The dashboard's path as the browser sees it: the app's global prefix (read at each request:
   * `setGlobalPrefix` may come after the module's init), then `path`.
   */
  basePath(): string {
    const prefix = this.appConfig.getGlobalPrefix().replace(/^\/+|\/+$/g, '');
    return prefix ? `/${prefix}${this.options.path}` : this.options.path;
  }

  setHeader(res: unknown, name: string, value: string): void {
    this.adapter.setHeader(res, name, value);
  }

  /** The policy and the other headers every response of the dashboard carries. */
  secure(res: unknown): void {
    for (const [name, value] of SECURITY_HEADERS) this.setHeader(res, name, value);
  }

  send(res: unknown, status: number, contentType: string, body: string): void {
    this.setHeader(res, 'Content-Type', contentType);
    this.adapter.reply(res, body, status);
  }

  page(res: unknown, status: number, markup: { toString(): string }): void {
    this.send(res, status, 'text/html; charset=utf-8', markup.toString());
  }

  /** 303: the browser follows a POST's answer with a GET. */
  seeOther(res: unknown, url: string): void {
    this.adapter.redirect(res, 303, url);
  }

  headersSent(res: unknown): boolean {
    return this.adapter.isHeadersSent(res);
  }
}

/** One header's value (the first, when it came more than once). */
export function header(req: DashboardRequest, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
