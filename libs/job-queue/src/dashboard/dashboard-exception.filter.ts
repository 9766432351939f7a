import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  Inject,
  Logger,
} from '@nestjs/common';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobQueueError,
  JobQueueUnavailableError,
  JobStateConflictError,
} from '../errors';
import { DASHBOARD_OPTIONS } from './dashboard.constants';
import { DashboardHttp } from './dashboard.http';
import type { ResolvedDashboardOptions } from './dashboard.options';
import { errorPage } from './pages/error.page';

/** The status and message a page shows for an error; never its stack. */
function statusOf(error: unknown): { status: number; message: string } {
  if (error instanceof HttpException) {
    const body = error.getResponse();
    const message =
      typeof body === 'object' && body !== null && 'message' in body
        ? [(body as { message: unknown }).message].flat().join('; ')
        : error.message;
    return { status: error.getStatus(), message };
  }
  if (error instanceof JobNotFoundError) return { status: 404, message: error.message };
  if (error instanceof JobStateConflictError) return { status: 409, message: error.message };
  if (error instanceof InvalidJobInputError) return { status: 400, message: error.message };
  if (error instanceof JobQueueUnavailableError) return { status: 503, message: error.message };
  // `ScheduleNotFoundError` and any other "no such thing" the queue names.
  if (error instanceof JobQueueError && error.name.endsWith('NotFoundError')) {
    return { status: 404, message: error.message };
  }
  if (error instanceof JobQueueError) return { status: 409, message: error.message };
  return { status: 500, message: 'The dashboard failed to answer; the error is in the app log.' };
}

/**
 * Every error of the dashboard's routes as a page (refusals of the guard and of CSRF too): the
 * queue's typed errors by their meaning (404 unknown, 409 state forbids it, 400 bad input) with
 * their message, anything else a 500 whose details go to the log only.
 */
@Catch()
export class DashboardExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('JobQueueDashboard');

  constructor(
    private readonly http: DashboardHttp,
    @Inject(DASHBOARD_OPTIONS) private readonly options: ResolvedDashboardOptions,
  ) {}

  catch(error: unknown, host: ArgumentsHost): void {
    const res = host.switchToHttp().getResponse();
    const { status, message } = statusOf(error);
    if (status >= 500 && !(error instanceof JobQueueUnavailableError)) {
      this.logger.error(error instanceof Error ? (error.stack ?? error.message) : String(error));
    }
    if (this.http.headersSent(res)) return; // a stream already under way: nothing to add
    this.http.secure(res);
    const ctx = { base: this.http.basePath(), title: this.options.title, csrf: '' };
    this.http.page(res, status, errorPage(ctx, status, message));
  }
}
