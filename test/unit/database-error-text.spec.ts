import { QueryFailedError } from 'typeorm';
import { JobQueueUnavailableError } from 'nest-pg-job-queue';
import {
  databaseErrorText,
  isTransientDatabaseError,
  typedDatabaseError,
} from '../../libs/job-queue/src/errors/database-error.util';

const SECRET = 'payload-secret-0c4e';

/** What TypeORM rejects with when the server refuses a statement: SQL, parameters, driver error. */
function refused(code: string, names: Record<string, string> = {}): QueryFailedError {
  const driverError = Object.assign(
    new Error(`new row violates check constraint (detail: "${SECRET}")`),
    { code, severity: 'ERROR', detail: `Failing row contains (${SECRET}).`, ...names },
  );
  return new QueryFailedError(`UPDATE jobs SET result = $1`, [`{"note":"${SECRET}"}`], driverError);
}

describe('databaseErrorText: what the worker may log about a failed statement', () => {
  it('a refused statement: SQLSTATE, its class and the names, nothing of the statement', () => {
    const text = databaseErrorText(refused('23514', { table: 'jobs', constraint: 'no_x' }));
    expect(text).toBe(
      'refused: SQLSTATE 23514 (integrity constraint violation), table "jobs", constraint "no_x"',
    );
  });

  it('a lost connection: the driver message, which is about the connection', () => {
    const lost = Object.assign(new Error('terminating connection due to administrator command'), {
      code: '57P01',
    });
    expect(databaseErrorText(new QueryFailedError('SELECT 1', [SECRET], lost))).toBe(
      'connection lost: terminating connection due to administrator command',
    );
    const refusedTwice = new AggregateError(
      [Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' })],
      '',
    );
    expect(databaseErrorText(refusedTwice)).toBe(
      'connection lost: connect ECONNREFUSED 127.0.0.1:1',
    );
  });

  it('our own errors by their message; anything else by its name alone', () => {
    expect(databaseErrorText(new JobQueueUnavailableError('did not answer'))).toBe(
      'did not answer',
    );
    expect(databaseErrorText(new TypeError(`cannot read ${SECRET}`))).toBe(
      'TypeError (its message is left out: it may quote job data)',
    );
    expect(databaseErrorText(SECRET)).not.toContain(SECRET);
  });

  it('typedDatabaseError keeps the refusal and drops the statement', () => {
    const typed = typedDatabaseError(refused('22P05')) as Error;
    expect(typed.message).toMatch(/^The database refused a job queue statement: SQLSTATE 22P05/);
    expect(JSON.stringify(typed)).not.toContain(SECRET);
    expect(typed.message).not.toContain(SECRET);
  });
});

describe('isTransientDatabaseError: worth sending the same write again?', () => {
  it.each([
    ['a lost connection', new Error('Connection terminated unexpectedly'), true],
    ['a deadlock (40P01)', refused('40P01'), true],
    ['a disk full (53100)', refused('53100'), true],
    ['lock_timeout (55P03)', refused('55P03'), true],
    ['a CHECK constraint (23514)', refused('23514'), false],
    ['a jsonb refusal (22P05)', refused('22P05'), false],
    ['a trigger raising (P0001)', refused('P0001'), false],
    ['no statement at all (a RangeError)', new RangeError('Invalid string length'), false],
  ])('%s', (_, error: unknown, transient) => {
    expect(isTransientDatabaseError(error)).toBe(transient);
  });
});
