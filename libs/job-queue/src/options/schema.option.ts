import { DEFAULT_SCHEMA, SCHEMA_NAME_PATTERN } from '../job-queue.constants';
import { optionValidator as check } from '../validation/option.validator';

/**
 * The queue's schema: an identifier that needs no quoting (`SCHEMA_NAME_PATTERN`), and neither a
 * system schema nor `public`, where other roles may be allowed to create objects. Shared with
 * `jobQueueMigrationsFor`, so a migration and the module refuse the same names alike.
 */
export function schemaOption(value: unknown): string {
  if (value === undefined) return DEFAULT_SCHEMA;
  if (typeof value !== 'string' || !SCHEMA_NAME_PATTERN.test(value)) {
    check.fail(
      'schema',
      value,
      'a schema name of lowercase letters, digits and _, not starting with a digit, ' +
        'at most 49 characters',
    );
  }
  if (value === 'public' || value === 'information_schema' || value.startsWith('pg_')) {
    check.fail('schema', value, "a schema of the queue's own, not public or a system schema");
  }
  return value;
}
