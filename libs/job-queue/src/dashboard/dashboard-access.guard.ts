import {
  CanActivate,
  ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  OnModuleInit,
  Type,
} from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { isObservable, lastValueFrom } from 'rxjs';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardHttp } from './dashboard.http';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { NO_GUARD } from './dashboard.messages';

/**
 * The one guard on every route of the dashboard: it sets the security headers first (a refusal
 * is a page too), then lets the app's `guard` decide, and with none refuses everything unless
 * `unsafeAllowAnonymous`. Reading the guard from the options at run time (not `@UseGuards` on
 * the class) is what lets `registerAsync`'s factory give it.
 */
@Injectable()
export class DashboardAccessGuard implements CanActivate, OnModuleInit {
  private guard: CanActivate | undefined;

  constructor(
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
    private readonly http: DashboardHttp,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** A guard class is made once, with its dependencies, as Nest makes a `@UseGuards` class. */
  async onModuleInit(): Promise<void> {
    const { guard } = this.options;
    if (typeof guard !== 'function') {
      this.guard = guard;
      return;
    }
    const type = guard as Type<CanActivate>;
    try {
      this.guard = this.moduleRef.get(type, { strict: false });
    } catch {
      this.guard = await this.moduleRef.create(type);
    }
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    this.http.secure(context.switchToHttp().getResponse());
    if (!this.guard) {
      if (this.options.unsafeAllowAnonymous) return true;
      throw new ForbiddenException(NO_GUARD);
    }
    const verdict = this.guard.canActivate(context);
    const allowed = isObservable(verdict) ? await lastValueFrom(verdict) : await verdict;
    if (!allowed)
      throw new ForbiddenException('Forbidden: the dashboard guard refused this request');
    return true;
  }
}
