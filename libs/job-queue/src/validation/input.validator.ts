import { InvalidJobInputError } from '../errors';
import { INVALID_INPUT, UNKNOWN_INPUT_OPTION } from '../job-queue.messages';
import { createValidator, Validator } from './validator';

/** What a call's options are called in its unknown-key error (`Unknown prune option "x"`). */
export type InputKind = 'job' | 'prune' | 'schedule' | 'listJobs' | 'redrive';

/** Checks of `QueueService` arguments: each refusal is an `InvalidJobInputError`. */
export function inputValidator(kind: InputKind): Validator {
  return createValidator(
    (field, value, expected) =>
      new InvalidJobInputError(INVALID_INPUT(field, value, expected), field, value),
    (field, known, value) =>
      new InvalidJobInputError(UNKNOWN_INPUT_OPTION(kind, field, known), field, value),
  );
}

/** The checks of job options, the kind most arguments are. */
export const jobInput: Validator = inputValidator('job');
