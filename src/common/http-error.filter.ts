import {
  ArgumentsHost,
  Catch,
  ExceptionFilter,
  HttpException,
  HttpStatus,
  Logger,
} from '@nestjs/common';
import { STATUS_CODES } from 'node:http';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobQueueError,
  JobStateConflictError,
} from 'nest-pg-job-queue';

/** Every error answer of the example has this shape; `field` names the input to fix, if one. */
export interface HttpErrorBody {
  statusCode: number;
  error: string;
  message: string | string[];
  field?: string;
}

const INTERNAL_ERROR_MESSAGE = 'Internal server error';

function reason(status: number): string {
  return STATUS_CODES[status] ?? 'Error';
}

/** The queue's typed errors: bad input 400, unknown job 404, wrong state 409, else 500. */
function fromJobQueueError(error: JobQueueError): HttpErrorBody {
  const status =
    error instanceof JobNotFoundError
      ? HttpStatus.NOT_FOUND
      : error instanceof JobStateConflictError
        ? HttpStatus.CONFLICT
        : error instanceof InvalidJobInputError
          ? HttpStatus.BAD_REQUEST
          : HttpStatus.INTERNAL_SERVER_ERROR;
  if (status >= 500)
    return { statusCode: status, error: reason(status), message: INTERNAL_ERROR_MESSAGE };
  // Every route names the job by `:id`, so an unknown job is a bad `id`.
  const field =
    error instanceof InvalidJobInputError
      ? error.field
      : error instanceof JobNotFoundError
        ? 'id'
        : undefined;
  return { statusCode: status, error: error.name, message: error.message, field };
}

/** Nest's HttpExceptions (RequestValidationPipe's 400s, a malformed JSON body's 400, 404 routes). */
function fromHttpException(exception: HttpException): HttpErrorBody {
  const status = exception.getStatus();
  const response = exception.getResponse();
  if (typeof response !== 'object' || response === null) {
    return { statusCode: status, error: reason(status), message: String(response) };
  }
  const { error, message, field } = response as Partial<Record<keyof HttpErrorBody, unknown>>;
  return {
    statusCode: status,
    error: typeof error === 'string' ? error : reason(status),
    message: typeof message === 'string' || Array.isArray(message) ? message : exception.message,
    field: typeof field === 'string' ? field : undefined,
  };
}

/**
 * Errors of the `http-errors` kind, which Express's body parser raises before any route runs: a
 * body over the limit (413), a wrong charset or encoding (415). `expose` is false for 5xx.
 */
interface HttpError {
  status: number;
  message: string;
  expose?: boolean;
  limit?: unknown;
}

function isHttpError(error: unknown): error is HttpError {
  const status = (error as Partial<HttpError> | null)?.status;
  return (
    error instanceof Error &&
    typeof status === 'number' &&
    Number.isInteger(status) &&
    status >= 400 &&
    status <= 599
  );
}

function fromHttpError(error: HttpError): HttpErrorBody {
  const status = error.status;
  let message = error.expose === false ? INTERNAL_ERROR_MESSAGE : error.message;
  if (status === 413 && typeof error.limit === 'number') {
    message = `${message}: the limit is ${error.limit} bytes`;
  }
  return { statusCode: status, error: reason(status), message };
}

export function toHttpErrorBody(exception: unknown): HttpErrorBody {
  if (exception instanceof JobQueueError) return fromJobQueueError(exception);
  if (exception instanceof HttpException) return fromHttpException(exception);
  if (isHttpError(exception)) return fromHttpError(exception);
  return {
    statusCode: HttpStatus.INTERNAL_SERVER_ERROR,
    error: reason(HttpStatus.INTERNAL_SERVER_ERROR),
    message: INTERNAL_ERROR_MESSAGE,
  };
}

interface HttpRequest {
  method: string;
  originalUrl?: string;
  url: string;
}

interface HttpResponse {
  headersSent: boolean;
  end(): void;
  status(code: number): { json(body: unknown): void };
}

/**
 * The example's one exception filter: every error an HTTP request meets (the queue's typed errors,
 * Nest's HttpExceptions, the body parser's 413 and malformed-JSON 400, anything else as a 500)
 * answers `{ statusCode, error, message }` (plus `field` when one input is to blame).
 *
 * A client's mistake (4xx) is logged as one debug line (method, path, status), no stack: the
 * answer tells the client what to fix. A 5xx is logged as an error with its stack, never with the
 * request's body, and the client only learns that it happened.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<HttpRequest>();
    const response = http.getResponse<HttpResponse>();
    const body = toHttpErrorBody(exception);
    // The path without its query string: values a client sent stay out of the log.
    const route = `${request.method} ${(request.originalUrl ?? request.url).split('?')[0]}`;
    if (body.statusCode >= 500) {
      this.logger.error(
        `${route}: ${body.statusCode} ${body.error}`,
        exception instanceof Error ? exception.stack : undefined,
      );
    } else {
      this.logger.debug(`${route}: ${body.statusCode} ${body.error}`);
    }
    if (response.headersSent) {
      response.end();
      return;
    }
    response.status(body.statusCode).json(body);
  }
}
