import { JobQueueError } from './job-queue.error';

/** SQLSTATE classes (the first two characters), to say what kind of refusal a code is. */
const SQLSTATE_CLASSES: Record<string, string> = {
  '0A': 'feature not supported',
  '21': 'cardinality violation',
  '22': 'data exception',
  '23': 'integrity constraint violation',
  '25': 'invalid transaction state',
  '28': 'invalid authorization',
  '40': 'transaction rollback',
  '42': 'syntax error or access rule violation',
  '53': 'insufficient resources',
  '54': 'program limit exceeded',
  '55': 'object not in prerequisite state',
  '57': 'operator intervention',
  P0: 'PL/pgSQL error (a trigger or function raised it)',
  XX: 'internal error',
};

/**
 * A refusal as text that holds no data: `SQLSTATE 23514 (integrity constraint violation), table
 * "jobs", constraint "…"`. For `JobQueueDatabaseError` and for the worker's log lines.
 */
export function describeRefusal(
  code: string | undefined,
  names: { table?: string; column?: string; constraint?: string },
): string {
  const kind = code === undefined ? undefined : SQLSTATE_CLASSES[code.slice(0, 2)];
  const where = Object.entries(names)
    .filter(([, name]) => name !== undefined)
    .map(([what, name]) => `${what} "${name}"`);
  return (
    `SQLSTATE ${code ?? 'unknown'}` +
    (kind ? ` (${kind})` : '') +
    (where.length > 0 ? `, ${where.join(', ')}` : '')
  );
}

/**
 * PostgreSQL refused a `QueueService` statement that the queue's own checks let through: a
 * trigger or constraint of the app's, a transaction of the caller's (`manager`) that had already
 * failed, a missing migration. It carries the SQLSTATE (`code`) and the names of the table,
 * column and constraint involved, and on purpose nothing of the statement: no SQL, no
 * parameters, no server message or detail (these quote values) and no `cause`, since the
 * parameters hold job payloads and an error's properties and cause end up in logs.
 *
 * @publicApi
 */
export class JobQueueDatabaseError extends JobQueueError {
  /** The table the server named, if any. */
  readonly table?: string;
  /** The column the server named, if any (a NOT NULL violation, say). */
  readonly column?: string;
  /** The constraint or index the server named, if any (`jobs_unique_key_idx` …). */
  readonly constraint?: string;

  constructor(
    /** The SQLSTATE, e.g. `23505`; `undefined` when the driver gave none. */
    readonly code: string | undefined,
    /** Where it happened, as the server named it: schema names, never values. */
    names: { table?: string; column?: string; constraint?: string } = {},
  ) {
    super(
      `The database refused a job queue statement: ${describeRefusal(code, names)}. ` +
        'Its parameters and the server message are left out: they may hold job data.',
    );
    if (names.table !== undefined) this.table = names.table;
    if (names.column !== undefined) this.column = names.column;
    if (names.constraint !== undefined) this.constraint = names.constraint;
  }
}
