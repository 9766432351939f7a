import { ArgumentMetadata, Injectable, ValidationError, ValidationPipe } from '@nestjs/common';
import { badRequest, shown } from './bad-request';

/** The first message of the first field that failed, from class-validator's nested errors. */
function firstFailure(errors: ValidationError[]): { field: string; message: string } {
  const error = errors[0];
  const message = Object.values(error.constraints ?? {})[0];
  if (message === undefined && error.children?.length) return firstFailure(error.children);
  return { field: error.property, message: message ?? `${error.property} is not valid` };
}

/**
 * Nest's ValidationPipe for the example's DTOs (class-transformer, then class-validator), with
 * the example's error shape: one 400 naming the first field to fix, in `field` and in the message,
 * not class-validator's list of every message. Unknown fields are dropped (whitelist), nothing is
 * converted implicitly (a JSON `"5"` is not the integer 5), and a body that is not a JSON object
 * (none, an array, a string) is a 400 naming `body` before any field is looked at.
 */
@Injectable()
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      transform: true,
      whitelist: true,
      stopAtFirstError: true,
      exceptionFactory: (errors) => {
        const { field, message } = firstFailure(errors);
        return badRequest(field, message);
      },
    });
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    const isDto = metadata.metatype !== undefined && this.toValidate(metadata);
    if (
      isDto &&
      metadata.type === 'body' &&
      (typeof value !== 'object' || value === null || Array.isArray(value))
    ) {
      throw badRequest('body', `body must be a JSON object (got ${shown(value)})`);
    }
    return super.transform(value, metadata);
  }
}
