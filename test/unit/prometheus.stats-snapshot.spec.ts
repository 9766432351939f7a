import { Logger } from '@nestjs/common';
import {
  JobStatsSnapshot,
  SNAPSHOT_READ_ABANDON_MS,
  SNAPSHOT_READ_TIMEOUT_MS,
} from '../../libs/job-queue/src/prometheus/job-stats-snapshot';
import { Queryable } from '../../libs/job-queue/src/sql/queryable';

const ROW = { counts: { report: { pending: 2 } }, count_ms: 3, age_ms: 1200 };

/** A database whose answers the test gives, one per query, in order. */
function scriptedDb() {
  const answers: Array<{ resolve: (rows: unknown) => void; reject: (error: unknown) => void }> = [];
  const db: Queryable & { query: jest.Mock } = {
    query: jest.fn(() => new Promise((resolve, reject) => answers.push({ resolve, reject }))),
  };
  return { db, answers };
}

describe('the stats snapshot as a scrape reads it', () => {
  let warn: jest.SpyInstance;

  beforeEach(() => {
    jest.useFakeTimers();
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });

  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('sends one read for the scrapes that arrive while it is under way', async () => {
    const { db, answers } = scriptedDb();
    const snapshot = new JobStatsSnapshot(db, 'job_queue');
    const reads = [snapshot.read(), snapshot.read(), snapshot.read()];
    expect(db.query).toHaveBeenCalledTimes(1);
    answers[0].resolve([ROW]);
    expect(await Promise.all(reads)).toEqual([ROW, ROW, ROW]);

    // Answered: the next scrape reads again.
    const next = snapshot.read();
    expect(db.query).toHaveBeenCalledTimes(2);
    answers[1].resolve([]);
    expect(await next).toBeUndefined(); // no snapshot yet
  });

  it('stops waiting after the timeout, and shares the unanswered read until it is abandoned', async () => {
    const { db } = scriptedDb();
    const snapshot = new JobStatsSnapshot(db, 'job_queue');
    const first = snapshot.read();
    await jest.advanceTimersByTimeAsync(SNAPSHOT_READ_TIMEOUT_MS);
    expect(await first).toBeUndefined();
    expect(warn).toHaveBeenCalledWith(
      expect.stringContaining(`no answer within ${SNAPSHOT_READ_TIMEOUT_MS} ms`),
    );

    // Still unanswered: the next scrapes wait on the same read, not a new one.
    const second = snapshot.read();
    await jest.advanceTimersByTimeAsync(SNAPSHOT_READ_TIMEOUT_MS);
    expect(await second).toBeUndefined();
    expect(db.query).toHaveBeenCalledTimes(1);

    await jest.advanceTimersByTimeAsync(SNAPSHOT_READ_ABANDON_MS);
    void snapshot.read();
    expect(db.query).toHaveBeenCalledTimes(2);
  });

  it('answers undefined when the read fails, with a few lines per outage', async () => {
    const { db, answers } = scriptedDb();
    const snapshot = new JobStatsSnapshot(db, 'job_queue');
    for (let i = 0; i < 5; i++) {
      const read = snapshot.read();
      answers[i].reject(new Error('connection refused'));
      expect(await read).toBeUndefined();
    }
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn).toHaveBeenCalledWith(
      'Reading the job stats snapshot failed (connection refused): the job gauges are left empty',
    );
  });
});
