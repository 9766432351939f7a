import { InvalidJobQueueOptionsError } from '../errors';
import { INVALID_OPTION, UNKNOWN_OPTION } from '../job-queue.messages';
import { createValidator, Validator } from './validator';

/** Checks of module and `@JobHandler` options: each refusal is an `InvalidJobQueueOptionsError`. */
export const optionValidator: Validator = createValidator(
  (option, value, expected) =>
    new InvalidJobQueueOptionsError(INVALID_OPTION(option, value, expected), option, value),
  // The value of an unknown option is left out: it may be anything, a secret included.
  (option, known) =>
    new InvalidJobQueueOptionsError(UNKNOWN_OPTION(option, known), option, undefined),
);
