import { InvalidJobInputError, JobQueueError, SnoozeJob } from 'nest-pg-job-queue';

describe('SnoozeJob', () => {
  it.each([0, 1, 60_000, 2_147_483_647])('takes a delay of %p ms', (delayMs) => {
    const snooze = new SnoozeJob(delayMs);
    expect(snooze.delayMs).toBe(delayMs);
    expect(snooze).toBeInstanceOf(JobQueueError);
    expect(snooze.name).toBe('SnoozeJob');
  });

  it.each([-1, 0.5, 2 ** 31, Number.NaN, Infinity, '5', undefined, null])(
    'refuses %p, naming snoozeMs and the value',
    (delayMs) => {
      let thrown: unknown;
      try {
        new SnoozeJob(delayMs as number);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(InvalidJobInputError);
      expect(thrown).toMatchObject({ field: 'snoozeMs', value: delayMs });
      expect((thrown as Error).message).toMatch(
        /^Invalid job snoozeMs: .+\. Expected an integer from 0 to 2147483647\.$/,
      );
    },
  );
});
