import type { CanActivate, InjectionToken, ModuleMetadata, Type } from '@nestjs/common';

/**
 * Options of `JobQueueDashboardModule.register`.
 *
 * @publicApi
 */
export interface JobQueueDashboardOptions {
  /**
   * Where the pages are served, under the app's global prefix (`setGlobalPrefix`), if any.
   * Letters, digits and `. _ ~ - /`. Default: `/queue` (see `DEFAULT_DASHBOARD_PATH`).
   */
  path?: string;
  /**
   * Who may use the dashboard: a Nest guard, a class (made by Nest's injector in the dashboard's
   * module: list what it needs in `registerAsync`'s `imports`, or make it a provider of a global
   * module) or an instance. It runs on every route: pages, the live stream, assets and actions.
   * Without it every request is refused, unless `unsafeAllowAnonymous` is set.
   */
  guard?: CanActivate | Type<CanActivate>;
  /**
   * Serves the dashboard to anyone who can reach it, without a guard: for a network nobody else
   * reaches. Default: `false`.
   */
  unsafeAllowAnonymous?: boolean;
  /** The pages' title. Default: `Job queue`. */
  title?: string;
}

/**
 * Options of `JobQueueDashboardModule.registerAsync`. The path is given here, beside the factory,
 * not by it: Nest mounts routes before any factory runs.
 *
 * @publicApi
 */
export interface JobQueueDashboardAsyncOptions extends Pick<ModuleMetadata, 'imports'> {
  /** As `JobQueueDashboardOptions.path`. Default: `/queue`. */
  path?: string;
  /** Providers passed to `useFactory`, in order. */
  inject?: InjectionToken[];
  /** The other options (`guard`, `unsafeAllowAnonymous`, `title`). */
  useFactory: (
    ...args: never[]
  ) => Omit<JobQueueDashboardOptions, 'path'> | Promise<Omit<JobQueueDashboardOptions, 'path'>>;
}

/** The default `path`. @publicApi */
export const DEFAULT_DASHBOARD_PATH = '/queue';

const DEFAULT_TITLE = 'Job queue';
const PATH_PATTERN = /^(\/[A-Za-z0-9._~-]+)+$/;
const OPTION_KEYS = ['path', 'guard', 'unsafeAllowAnonymous', 'title'];

/** The options as the dashboard uses them. */
export interface ResolvedDashboardOptions {
  path: string;
  guard: CanActivate | Type<CanActivate> | undefined;
  unsafeAllowAnonymous: boolean;
  title: string;
}

function fail(field: string, value: unknown, expected: string): never {
  throw new Error(
    `JobQueueDashboardModule: ${field} ${JSON.stringify(String(value))} is not ${expected}`,
  );
}

/** `/queue`, `/admin/queue`: one leading slash, none at the end, no route parameters. */
export function dashboardPath(path: unknown = DEFAULT_DASHBOARD_PATH): string {
  const trimmed = typeof path === 'string' && path.length > 1 ? path.replace(/\/+$/, '') : path;
  if (typeof trimmed !== 'string' || !PATH_PATTERN.test(trimmed)) {
    fail('path', path, 'a path such as "/queue" (letters, digits and . _ ~ - /)');
  }
  return trimmed;
}

function isGuard(value: unknown): value is CanActivate | Type<CanActivate> {
  if (typeof value === 'function') return true;
  return typeof (value as CanActivate | null)?.canActivate === 'function';
}

/** Defaults and checks, one path for `register` and `registerAsync`: a bad option fails the boot. */
export function resolveDashboardOptions(
  options: JobQueueDashboardOptions,
): ResolvedDashboardOptions {
  if (typeof options !== 'object' || options === null) fail('options', options, 'an object');
  for (const key of Object.keys(options)) {
    if (!OPTION_KEYS.includes(key)) fail('option', key, `one of ${OPTION_KEYS.join(', ')}`);
  }
  const { guard, unsafeAllowAnonymous = false, title = DEFAULT_TITLE } = options;
  if (guard !== undefined && !isGuard(guard)) {
    fail('guard', guard, 'a CanActivate class or instance');
  }
  if (typeof unsafeAllowAnonymous !== 'boolean') {
    fail('unsafeAllowAnonymous', unsafeAllowAnonymous, 'a boolean');
  }
  if (typeof title !== 'string' || title.length === 0 || title.length > 200) {
    fail('title', title, 'a string of 1 to 200 characters');
  }
  return { path: dashboardPath(options.path), guard, unsafeAllowAnonymous, title };
}
