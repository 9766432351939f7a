import { BadRequestException } from '@nestjs/common';

/** The example's 400: `{ statusCode, error, message, field }`, `field` naming the input to fix. */
export function badRequest(field: string, message: string): BadRequestException {
  return new BadRequestException({ statusCode: 400, error: 'Bad Request', message, field });
}

/** A value as a client sent it, for a message: JSON where it has one. */
export function shown(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}
