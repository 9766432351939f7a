import { DEFAULT_SCHEMA, SCHEMA_NAME_PATTERN } from './job-queue.constants';
import { INVALID_OPTION } from './job-queue.messages';
import { InvalidJobQueueOptionsError } from './errors';

// The check of the queue's schema name, on its own so that the module's options and the
// migrations (`jobQueueMigrationsFor`) refuse the same names alike without the migrations
// depending on the options module.

function fail(value: unknown, expected: string): never {
  throw new InvalidJobQueueOptionsError(INVALID_OPTION('schema', value, expected), 'schema', value);
}

/**
 * The queue's schema: an identifier that needs no quoting (`SCHEMA_NAME_PATTERN`), and neither a
 * system schema nor `public`, where other roles may be allowed to create objects. Throws
 * `InvalidJobQueueOptionsError` naming the option `schema`.
 */
export function schemaOption(value: unknown): string {
  if (value === undefined) return DEFAULT_SCHEMA;
  if (typeof value !== 'string' || !SCHEMA_NAME_PATTERN.test(value)) {
    fail(
      value,
      'a schema name of lowercase letters, digits and _, not starting with a digit, ' +
        'at most 49 characters',
    );
  }
  if (value === 'public' || value === 'information_schema' || value.startsWith('pg_')) {
    fail(value, "a schema of the queue's own, not public or a system schema");
  }
  return value;
}
