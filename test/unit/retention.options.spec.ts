import { InvalidJobQueueOptionsError, JobQueueModuleOptions } from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';
import { resolveHandlerOptions } from '../../libs/job-queue/src/discovery/job-handler-options';
import { JobHandlerOptions } from '../../libs/job-queue/src/interfaces/job-handler-options.interface';

const DAY = 86_400_000;

function refusal(run: () => unknown): InvalidJobQueueOptionsError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    return error as InvalidJobQueueOptionsError;
  }
  throw new Error('expected the options to be refused');
}

const moduleRetention = (retention: unknown) =>
  resolveJobQueueOptions({ retention } as JobQueueModuleOptions).retention;

const handlerRetention = (retention: unknown, module: unknown = undefined) =>
  resolveHandlerOptions(
    "@JobHandler('t') on H#m",
    { retention } as JobHandlerOptions,
    resolveJobQueueOptions({ retention: module } as JobQueueModuleOptions),
    't',
  ).retention;

describe('retention options', () => {
  it('defaults to completed 1 day, failed and cancelled 7 days, pruning every 60 s', () => {
    const resolved = resolveJobQueueOptions();
    expect(resolved.retention).toEqual({
      completedMs: DAY,
      failedMs: 7 * DAY,
      cancelledMs: 7 * DAY,
    });
    expect(resolved.retentionIntervalMs).toBe(60_000);
  });

  it('keeps a given retentionIntervalMs, beside the other intervals', () => {
    const resolved = resolveJobQueueOptions({
      reaperIntervalMs: 5,
      stagerIntervalMs: 6,
      retentionIntervalMs: 7,
    });
    expect(resolved).toMatchObject({
      reaperIntervalMs: 5,
      stagerIntervalMs: 6,
      retentionIntervalMs: 7,
    });
  });

  it('keeps what is given over the defaults; false keeps a status, or everything, forever', () => {
    expect(moduleRetention({ completedMs: 0, failedMs: false })).toEqual({
      completedMs: 0,
      failedMs: null,
      cancelledMs: 7 * DAY,
    });
    expect(moduleRetention(false)).toEqual({
      completedMs: null,
      failedMs: null,
      cancelledMs: null,
    });
    expect(moduleRetention({ cancelledMs: 365_000 * DAY }).cancelledMs).toBe(365_000 * DAY);
  });

  it('merges a handler’s retention over the module’s', () => {
    expect(handlerRetention(undefined, { completedMs: 5 })).toEqual({
      completedMs: 5,
      failedMs: 7 * DAY,
      cancelledMs: 7 * DAY,
    });
    expect(handlerRetention({ failedMs: 9 }, { completedMs: 5, cancelledMs: false })).toEqual({
      completedMs: 5,
      failedMs: 9,
      cancelledMs: null,
    });
    expect(handlerRetention(false, { completedMs: 5 })).toEqual({
      completedMs: null,
      failedMs: null,
      cancelledMs: null,
    });
    expect(handlerRetention({ completedMs: 1 }, false)).toEqual({
      completedMs: 1,
      failedMs: null,
      cancelledMs: null,
    });
  });

  it.each([
    [true, 'retention'],
    [null, 'retention'],
    [60_000, 'retention'],
    [[], 'retention'],
    [{ completedMs: -1 }, 'retention.completedMs'],
    [{ failedMs: 1.5 }, 'retention.failedMs'],
    [{ cancelledMs: '1d' }, 'retention.cancelledMs'],
    [{ cancelledMs: true }, 'retention.cancelledMs'],
    [{ completedMs: 365_001 * DAY }, 'retention.completedMs'],
    [{ completedMs: Number.NaN }, 'retention.completedMs'],
    [{ completed: 1 }, 'retention.completed'],
  ])('refuses module retention %p, naming %s and the value', (value, option) => {
    const error = refusal(() => moduleRetention(value));
    expect(error.option).toBe(option);
    expect(error.message).toContain(`"${option}"`);
  });

  it.each([0, -1, 1.5, '60000'])('refuses retentionIntervalMs %p', (value) => {
    const error = refusal(() =>
      resolveJobQueueOptions({ retentionIntervalMs: value } as JobQueueModuleOptions),
    );
    expect(error).toMatchObject({ option: 'retentionIntervalMs', value });
  });

  it('refuses a bad handler retention, naming the handler and the key', () => {
    expect(refusal(() => handlerRetention({ failedMs: -5 }))).toMatchObject({
      option: "@JobHandler('t') on H#m: retention.failedMs",
      value: -5,
    });
    expect(refusal(() => handlerRetention('forever'))).toMatchObject({
      option: "@JobHandler('t') on H#m: retention",
      value: 'forever',
    });
  });
});
