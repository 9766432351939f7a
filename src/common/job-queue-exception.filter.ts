import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus } from '@nestjs/common';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobQueueError,
  JobStateConflictError,
} from 'nest-pg-job-queue';

/** Turns the queue's typed errors into HTTP answers: bad input 400, unknown job 404, wrong state 409. */
@Catch(JobQueueError)
export class JobQueueExceptionFilter implements ExceptionFilter {
  catch(error: JobQueueError, host: ArgumentsHost): void {
    const status =
      error instanceof JobNotFoundError
        ? HttpStatus.NOT_FOUND
        : error instanceof JobStateConflictError
          ? HttpStatus.CONFLICT
          : error instanceof InvalidJobInputError
            ? HttpStatus.BAD_REQUEST
            : HttpStatus.INTERNAL_SERVER_ERROR;
    // Every route names the job by `:id`, so an unknown job is a bad `id`.
    const field =
      error instanceof InvalidJobInputError
        ? error.field
        : error instanceof JobNotFoundError
          ? 'id'
          : undefined;
    host
      .switchToHttp()
      .getResponse<{ status(code: number): { json(body: unknown): void } }>()
      .status(status)
      .json({ statusCode: status, error: error.name, message: error.message, field });
  }
}
