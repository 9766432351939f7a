import { JobHandlerRegistry } from '../../libs/job-queue/src/discovery/job-handler.registry';
import { QueueClock } from '../../libs/job-queue/src/periodic/queue-clock';
import { ClaimWakeup } from '../../libs/job-queue/src/periodic/claim-wakeup';
import { Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { JobStatus } from 'nest-pg-job-queue';
import {
  DEFAULT_COMPLETION_BATCH_SIZE,
  DEFAULT_COMPLETION_FLUSH_MS,
} from '../../libs/job-queue/src/job-queue.constants';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import {
  COMPLETION_WRITES_AT_ONCE,
  JobCompleter,
  MAX_WRITE_RESULT_CHARS,
  QueuedOutcome,
} from '../../libs/job-queue/src/worker/job-completer';
import { RunningJobs } from '../../libs/job-queue/src/worker/running-jobs';
import { JobEventStream } from '../../libs/job-queue/src/events/job-event-stream';
import { CapturingLogger } from '../support/capturing-logger';

/** One statement the completer sent: the job ids it carried, and whether it wrote outcomes as completed. */
interface Statement {
  ids: string[];
  completions: boolean;
}

/**
 * What the completer writes through: it records each statement and refuses, as an app's CHECK
 * constraint would (SQLSTATE 23514, not transient), any completion of a job in `refuse`. Whether
 * PostgreSQL refuses such a write is the integration tests' business (a real constraint there);
 * here only the completer's own arithmetic is checked: how it cuts and splits its batches.
 */
function recordingDatabase(refuse: string[] = []) {
  const statements: Statement[] = [];
  const db = {
    async query(_sql: string, parameters: unknown[]) {
      // The ids go as the text of a bigint[] ('{1,2}'), as PostgreSQL reads it.
      const ids = (parameters[1] as string).slice(1, -1).split(',').filter(Boolean);
      // completeJobs sends (worker, ids, tokens, results, now); finishJobs sends the statuses too.
      const completions = parameters.length === 5;
      statements.push({ ids, completions });
      if (completions && ids.some((id) => refuse.includes(id))) {
        throw Object.assign(new Error('new row violates check constraint'), {
          severity: 'ERROR',
          code: '23514',
          table: 'jobs',
          constraint: 'app_refuses_result',
        });
      }
      return [];
    },
  };
  return { db: db as unknown as DataSource, statements };
}

/**
 * What the completer writes through when each write should stay under way until the test ends
 * it: `ended(i)` settles the i-th statement sent (0-based); `sent` holds their job ids.
 */
function holdingDatabase() {
  const sent: string[][] = [];
  const enders: Array<() => void> = [];
  const db = {
    query(_sql: string, parameters: unknown[]) {
      sent.push((parameters[1] as string).slice(1, -1).split(',').filter(Boolean));
      return new Promise<unknown[]>((resolve) => enders.push(() => resolve([])));
    },
  };
  const end = async (index: number) => {
    enders[index]();
    await jest.advanceTimersByTimeAsync(0);
  };
  return { db: db as unknown as DataSource, sent, end };
}

const completion = (id: number, resultJson = '{}', updatesOtherJobs = false): QueuedOutcome => ({
  id: String(id),
  runToken: 1,
  status: JobStatus.Completed,
  resultJson,
  lastError: null,
  retryDelayMs: null,
  progress: null,
  stage: null,
  logRows: [],
  logOutcome: false,
  ifRefused: () => ({ status: JobStatus.Failed, retryDelayMs: null }),
  updatesOtherJobs,
  subject: {
    id: String(id),
    jobType: 't',
    status: JobStatus.Running,
    attempts: 1,
    progress: 0,
    currentStage: null,
  },
});

/** A stream nobody listens to: the completer builds no events. */
const NO_EVENTS = { active: false, emit: () => undefined } as unknown as JobEventStream;

const ids = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => String(from + i));

// Jest's fake timers drive the flush timer: nothing waits for real time.
describe('JobCompleter: how outcomes are cut into writes', () => {
  const logs = new CapturingLogger();

  beforeEach(() => {
    jest.useFakeTimers();
    Logger.overrideLogger(logs);
    logs.lines.length = 0;
  });

  afterEach(() => {
    jest.useRealTimers();
    Logger.overrideLogger(['error', 'warn']);
  });

  const completer = (db: DataSource) =>
    new JobCompleter(
      db,
      // No NOTIFY in the statements: their parameters are the shapes this file tells apart.
      resolveJobQueueOptions({ events: { remote: false } }),
      new RunningJobs(),
      NO_EVENTS,
      new JobHandlerRegistry(),
      new ClaimWakeup(),
      new QueueClock(),
    );

  it(`waits ${DEFAULT_COMPLETION_FLUSH_MS} ms for company, then writes what came in one statement`, async () => {
    const { db, statements } = recordingDatabase();
    const outcomes = completer(db);
    outcomes.push(completion(1));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS - 1);
    outcomes.push(completion(2));
    expect(statements).toEqual([]);
    await jest.advanceTimersByTimeAsync(1);
    expect(statements).toEqual([{ ids: ['1', '2'], completions: true }]);
  });

  it(`writes at most ${DEFAULT_COMPLETION_BATCH_SIZE} outcomes a statement, in the order they came`, async () => {
    const { db, statements } = recordingDatabase();
    const outcomes = completer(db);
    for (let id = 1; id <= 1_200; id++) outcomes.push(completion(id));
    await jest.runAllTimersAsync();
    expect(statements.map((s) => s.ids.length)).toEqual([500, 500, 200]);
    expect(statements.flatMap((s) => s.ids)).toEqual(ids(1, 1_200));
  });

  it('starts a new statement before the results it carries would pass the size cap', async () => {
    const { db, statements } = recordingDatabase();
    const outcomes = completer(db);
    // Just under half the cap each: two fit in a statement, a third does not.
    const big = 'x'.repeat(Math.floor(MAX_WRITE_RESULT_CHARS / 2) - 1);
    for (let id = 1; id <= 5; id++) outcomes.push(completion(id, big));
    await jest.runAllTimersAsync();
    expect(statements.map((s) => s.ids)).toEqual([['1', '2'], ['3', '4'], ['5']]);
  });

  it('writes one result bigger than the cap on its own rather than never', async () => {
    const { db, statements } = recordingDatabase();
    const outcomes = completer(db);
    outcomes.push(completion(1, 'x'.repeat(MAX_WRITE_RESULT_CHARS + 1)));
    outcomes.push(completion(2));
    await jest.runAllTimersAsync();
    expect(statements.map((s) => s.ids)).toEqual([['1'], ['2']]);
  });

  it('splits a refused batch in halves down to the one refused outcome, writing the rest once', async () => {
    const { db, statements } = recordingDatabase(['37']);
    const outcomes = completer(db);
    for (let id = 1; id <= 100; id++) outcomes.push(completion(id));
    await jest.runAllTimersAsync();

    const refused = statements.filter((s) => s.completions && s.ids.includes('37'));
    // 100 → 50 → 25 → 13 → 6 → 3 → 2 → 1: one refused statement per halving, no more.
    expect(refused.map((s) => s.ids.length)).toEqual([100, 50, 25, 13, 6, 3, 2, 1]);
    const written = statements.filter((s) => s.completions && !s.ids.includes('37'));
    expect(written.flatMap((s) => s.ids).sort((a, b) => Number(a) - Number(b))).toEqual(
      ids(1, 100).filter((id) => id !== '37'),
    );
    // The refused one is recorded as a failed attempt, in a statement of its own.
    expect(statements.filter((s) => !s.completions)).toEqual([{ ids: ['37'], completions: false }]);
    expect(logs.matching(/refused the outcome of 1 job\(s\).*job 37 \(/)).toHaveLength(1);
  });

  it(`keeps at most ${COMPLETION_WRITES_AT_ONCE} writes under way, the next starting as one ends`, async () => {
    const { db, sent, end } = holdingDatabase();
    const outcomes = completer(db);
    for (let id = 1; id <= 1_200; id++) outcomes.push(completion(id));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    expect(sent.map((ids) => ids.length)).toEqual([500, 500]);

    await end(1);
    expect(sent.map((ids) => ids.length)).toEqual([500, 500, 200]);
    expect(sent.flat()).toEqual(ids(1, 1_200));
  });

  it('writes an outcome that updates other jobs alone: after the write under way, none beside it', async () => {
    const { db, sent, end } = holdingDatabase();
    const outcomes = completer(db);
    outcomes.push(completion(1));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    outcomes.push(completion(2, '{}', true));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    expect(sent).toEqual([['1']]);

    await end(0);
    expect(sent).toEqual([['1'], ['2']]);
    outcomes.push(completion(3));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    expect(sent).toEqual([['1'], ['2']]);

    await end(1);
    expect(sent).toEqual([['1'], ['2'], ['3']]);
  });

  it('ends a write that starts beside another before the first outcome that updates other jobs', async () => {
    const { db, sent, end } = holdingDatabase();
    const outcomes = completer(db);
    outcomes.push(completion(1));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    outcomes.push(completion(2));
    outcomes.push(completion(3, '{}', true));
    outcomes.push(completion(4));
    await jest.advanceTimersByTimeAsync(DEFAULT_COMPLETION_FLUSH_MS);
    expect(sent).toEqual([['1'], ['2']]);

    await end(0);
    expect(sent).toEqual([['1'], ['2']]);
    await end(1);
    expect(sent).toEqual([['1'], ['2'], ['3', '4']]);
  });
});
