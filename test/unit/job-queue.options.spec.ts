import { hostname } from 'node:os';
import {
  InvalidJobQueueOptionsError,
  JobQueueError,
  JobQueueModuleOptions,
} from 'nest-pg-job-queue';
import { resolveJobQueueOptions } from '../../libs/job-queue/src/job-queue.options';

function resolveError(options: unknown): InvalidJobQueueOptionsError {
  try {
    resolveJobQueueOptions(options as JobQueueModuleOptions);
  } catch (error) {
    return error as InvalidJobQueueOptionsError;
  }
  throw new Error(`expected ${JSON.stringify(options)} to be refused`);
}

describe('resolveJobQueueOptions', () => {
  it('fills in every default', () => {
    const resolved = resolveJobQueueOptions();
    expect(resolved).toEqual({
      dataSource: undefined,
      schema: 'job_queue',
      workerId: expect.any(String),
      worker: {
        concurrency: 10,
        batchSize: 10,
        prefetch: 'auto',
        pollIntervalMs: 1_000,
        jobTypes: undefined,
        listen: true,
        autoStart: true,
      },
      staleAfterMs: 60_000,
      heartbeatIntervalMs: 10_000,
      reaperIntervalMs: 15_000,
      stuckAfterMs: 300_000,
      stagerIntervalMs: 1_000,
      statsIntervalMs: 5_000,
      shutdownTimeoutMs: 10_000,
      defaultMaxAttempts: 3,
      backoff: { baseDelayMs: 1_000, maxDelayMs: 3_600_000, jitter: 0.2 },
      maxPayloadBytes: 1024 * 1024,
      maxResultBytes: 1024 * 1024,
      maxMetaBytes: 8 * 1024,
      context: undefined,
      transactionHost: false,
      maxBatchSize: 10_000,
      maxBatchBytes: 32 * 1024 * 1024,
      progressThrottleMs: 250,
      databaseTimeoutMs: 10_000,
      retention: { completedMs: 86_400_000, failedMs: 604_800_000, cancelledMs: 604_800_000 },
      retentionIntervalMs: 60_000,
      events: {
        remote: false,
        bufferSize: 10_000,
        waitPollIntervalMs: 1_000,
        maxLogRowsPerJob: 1_000,
        logCompletedRuns: false,
      },
    });
    expect(resolveJobQueueOptions({})).toEqual({ ...resolved, workerId: expect.any(String) });
  });

  it('defaults workerId to host:pid:random, different per resolution', () => {
    const a = resolveJobQueueOptions().workerId;
    const b = resolveJobQueueOptions().workerId;
    expect(a).toMatch(new RegExp(`^${hostname()}:${process.pid}:[0-9a-f]{6}$`));
    expect(a).not.toBe(b);
  });

  it('keeps given values, and derives batchSize and heartbeat from them', () => {
    const resolved = resolveJobQueueOptions({
      dataSource: 'jobsdb',
      workerId: 'worker-1',
      worker: {
        concurrency: 4,
        prefetch: 20,
        jobTypes: ['a', 'b'],
        listen: false,
        autoStart: false,
      },
      staleAfterMs: 3_000,
      backoff: { baseDelayMs: 50 },
      isGlobal: true,
    } as JobQueueModuleOptions);
    expect(resolved).toMatchObject({
      dataSource: 'jobsdb',
      workerId: 'worker-1',
      worker: {
        concurrency: 4,
        batchSize: 4,
        prefetch: 20,
        jobTypes: ['a', 'b'],
        listen: false,
        autoStart: false,
      },
      staleAfterMs: 3_000,
      heartbeatIntervalMs: 1_000,
      backoff: { baseDelayMs: 50, maxDelayMs: 3_600_000, jitter: 0.2 },
    });
  });

  it('worker: false is an enqueue-only process', () => {
    expect(resolveJobQueueOptions({ worker: false }).worker).toBe(false);
  });

  it.each<[string, unknown, string, string]>([
    // [case, options, option named, text the message must show]
    ['worker.concurrency 0', { worker: { concurrency: 0 } }, 'worker.concurrency', ': 0.'],
    ['negative staleAfterMs', { staleAfterMs: -5 }, 'staleAfterMs', '-5'],
    [
      'heartbeatIntervalMs equal to staleAfterMs',
      { staleAfterMs: 1_000, heartbeatIntervalMs: 1_000 },
      'heartbeatIntervalMs',
      '1000',
    ],
    [
      'heartbeatIntervalMs above staleAfterMs',
      { staleAfterMs: 1_000, heartbeatIntervalMs: 5_000 },
      'heartbeatIntervalMs',
      '5000',
    ],
    [
      'heartbeatIntervalMs not a number',
      { heartbeatIntervalMs: 'x' },
      'heartbeatIntervalMs',
      `'x'`,
    ],
    // No heartbeat can be shorter than 1 ms, so the error must name staleAfterMs, the option set.
    ['staleAfterMs 1', { staleAfterMs: 1 }, 'staleAfterMs', ': 1.'],
    ['unknown key workr', { workr: { concurrency: 2 } }, 'workr', 'workr'],
    [
      'unknown nested key worker.concurency',
      { worker: { concurency: 2 } },
      'worker.concurency',
      'worker.concurency',
    ],
    ['unknown nested key backoff.base', { backoff: { base: 2 } }, 'backoff.base', 'backoff.base'],
    ['backoff.jitter 2', { backoff: { jitter: 2 } }, 'backoff.jitter', ': 2.'],
    ['backoff.jitter NaN', { backoff: { jitter: NaN } }, 'backoff.jitter', 'NaN'],
    [
      'backoff.maxDelayMs below baseDelayMs',
      { backoff: { baseDelayMs: 5_000, maxDelayMs: 1_000 } },
      'backoff.maxDelayMs',
      '1000',
    ],
    [
      'worker.concurrency as a string',
      { worker: { concurrency: '10' } },
      'worker.concurrency',
      `'10'`,
    ],
    ['worker.concurrency 1.5', { worker: { concurrency: 1.5 } }, 'worker.concurrency', '1.5'],
    ['worker.batchSize 0', { worker: { batchSize: 0 } }, 'worker.batchSize', ': 0.'],
    ['worker.prefetch -1', { worker: { prefetch: -1 } }, 'worker.prefetch', ': -1.'],
    ['worker.prefetch 10001', { worker: { prefetch: 10_001 } }, 'worker.prefetch', ': 10001.'],
    [
      'worker.prefetch "on"',
      { worker: { prefetch: 'on' } },
      'worker.prefetch',
      `'auto' or an integer`,
    ],
    ['worker.pollIntervalMs 0', { worker: { pollIntervalMs: 0 } }, 'worker.pollIntervalMs', ': 0.'],
    ['worker.jobTypes []', { worker: { jobTypes: [] } }, 'worker.jobTypes', '[]'],
    [
      'worker.jobTypes with an empty type',
      { worker: { jobTypes: ['a', ''] } },
      'worker.jobTypes[1]',
      `''`,
    ],
    ['worker.listen "yes"', { worker: { listen: 'yes' } }, 'worker.listen', `'yes'`],
    ['worker.autoStart "false"', { worker: { autoStart: 'false' } }, 'worker.autoStart', `'false'`],
    ['worker.autoStart 0', { worker: { autoStart: 0 } }, 'worker.autoStart', ': 0.'],
    ['worker true', { worker: true }, 'worker', 'true'],
    ['events false', { events: false }, 'events', 'false'],
    ['events.remote "no"', { events: { remote: 'no' } }, 'events.remote', `'no'`],
    ['events.bufferSize 0', { events: { bufferSize: 0 } }, 'events.bufferSize', ': 0.'],
    [
      'events.waitPollIntervalMs 1.5',
      { events: { waitPollIntervalMs: 1.5 } },
      'events.waitPollIntervalMs',
      ': 1.5.',
    ],
    ['dataSource empty', { dataSource: '' }, 'dataSource', `''`],
    ['workerId of 256 characters', { workerId: 'w'.repeat(256) }, 'workerId', 'www'],
    ['shutdownTimeoutMs -1', { shutdownTimeoutMs: -1 }, 'shutdownTimeoutMs', '-1'],
    ['reaperIntervalMs 0', { reaperIntervalMs: 0 }, 'reaperIntervalMs', ': 0.'],
    ['stuckAfterMs 0', { stuckAfterMs: 0 }, 'stuckAfterMs', ': 0.'],
    ['stuckAfterMs true', { stuckAfterMs: true }, 'stuckAfterMs', ': true.'],
    ['stagerIntervalMs 0', { stagerIntervalMs: 0 }, 'stagerIntervalMs', ': 0.'],
    ['stagerIntervalMs 1.5', { stagerIntervalMs: 1.5 }, 'stagerIntervalMs', ': 1.5.'],
    ['statsIntervalMs 0', { statsIntervalMs: 0 }, 'statsIntervalMs', ': 0.'],
    ['statsIntervalMs "5000"', { statsIntervalMs: '5000' }, 'statsIntervalMs', `: '5000'.`],
    ['defaultMaxAttempts 0', { defaultMaxAttempts: 0 }, 'defaultMaxAttempts', ': 0.'],
    ['maxPayloadBytes 0', { maxPayloadBytes: 0 }, 'maxPayloadBytes', ': 0.'],
    ['maxResultBytes 0', { maxResultBytes: 0 }, 'maxResultBytes', ': 0.'],
    ['maxMetaBytes 0', { maxMetaBytes: 0 }, 'maxMetaBytes', ': 0.'],
    ['context not an object', { context: 'cls' }, 'context', 'cls'],
    ['context.capture not a function', { context: { capture: 1 } }, 'context.capture', ': 1.'],
    ['context with an unknown hook', { context: { around: () => 1 } }, 'context.around', ''],
    ['maxResultBytes 1.5', { maxResultBytes: 1.5 }, 'maxResultBytes', '1.5'],
    [
      "maxResultBytes over jsonb's 256 MB",
      { maxResultBytes: 256 * 1024 * 1024 },
      'maxResultBytes',
      '268435456',
    ],
    ['maxBatchSize 0', { maxBatchSize: 0 }, 'maxBatchSize', ': 0.'],
    ['maxBatchSize 1.5', { maxBatchSize: 1.5 }, 'maxBatchSize', '1.5'],
    ['maxBatchSize as a string', { maxBatchSize: '100' }, 'maxBatchSize', `'100'`],
    ['maxBatchBytes 0', { maxBatchBytes: 0 }, 'maxBatchBytes', ': 0.'],
    [
      "maxBatchBytes over jsonb's 256 MB",
      { maxBatchBytes: 256 * 1024 * 1024 },
      'maxBatchBytes',
      '268435456',
    ],
    ['progressThrottleMs -1', { progressThrottleMs: -1 }, 'progressThrottleMs', '-1'],
    ['databaseTimeoutMs -1', { databaseTimeoutMs: -1 }, 'databaseTimeoutMs', '-1'],
    ['databaseTimeoutMs 1.5', { databaseTimeoutMs: 1.5 }, 'databaseTimeoutMs', '1.5'],
    [
      'staleAfterMs over the integer range',
      { staleAfterMs: 2 ** 31 },
      'staleAfterMs',
      '2147483648',
    ],
    ['options not an object', 'fast', 'options', `'fast'`],
    ['schema with a capital', { schema: 'Queue' }, 'schema', `'Queue'`],
    ['schema needing quotes', { schema: 'job"queue' }, 'schema', 'job"queue'],
    ['schema qualified', { schema: 'a.b' }, 'schema', `'a.b'`],
    ['schema starting with a digit', { schema: '1q' }, 'schema', `'1q'`],
    ['schema empty', { schema: '' }, 'schema', `''`],
    ['schema of 50 characters', { schema: 'q'.repeat(50) }, 'schema', 'qqq'],
    ['schema public', { schema: 'public' }, 'schema', "'public'"],
    ['schema pg_catalog', { schema: 'pg_catalog' }, 'schema', "'pg_catalog'"],
    ['schema information_schema', { schema: 'information_schema' }, 'schema', 'information'],
    ['schema not a string', { schema: 5 }, 'schema', ': 5.'],
  ])('refuses %s', (_, options, option, shown) => {
    const error = resolveError(options);
    expect(error).toBeInstanceOf(InvalidJobQueueOptionsError);
    expect(error).toBeInstanceOf(JobQueueError);
    expect(error.name).toBe('InvalidJobQueueOptionsError');
    expect(error.option).toBe(option);
    expect(error.message).toContain(`"${option}"`);
    expect(error.message).toContain(shown);
  });

  it('keeps a schema name that needs no quoting, up to 49 characters', () => {
    expect(resolveJobQueueOptions({ schema: 'billing_queue2' }).schema).toBe('billing_queue2');
    expect(resolveJobQueueOptions({ schema: `_${'q'.repeat(48)}` }).schema).toHaveLength(49);
  });

  it('lists the known options when a key is unknown', () => {
    expect(resolveError({ workr: {} }).message).toMatch(
      /Known options: dataSource, schema, workerId, worker,/,
    );
    expect(resolveError({ worker: { concurency: 2 } }).message).toContain(
      'Known options: concurrency, batchSize, prefetch, pollIntervalMs, jobTypes, listen, autoStart.',
    );
  });

  it('keeps batch caps up to their limits', () => {
    expect(resolveJobQueueOptions({ maxBatchSize: 1, maxBatchBytes: 1 })).toMatchObject({
      maxBatchSize: 1,
      maxBatchBytes: 1,
    });
    expect(
      resolveJobQueueOptions({ maxBatchSize: 2 ** 31 - 1, maxBatchBytes: 256 * 1024 * 1024 - 1 }),
    ).toMatchObject({ maxBatchSize: 2 ** 31 - 1, maxBatchBytes: 256 * 1024 * 1024 - 1 });
  });

  it('takes databaseTimeoutMs 0 as "no timeout"', () => {
    expect(resolveJobQueueOptions({ databaseTimeoutMs: 0 }).databaseTimeoutMs).toBe(0);
  });

  it('carries the refused value', () => {
    expect(resolveError({ worker: { concurrency: 0 } }).value).toBe(0);
    expect(resolveError({ backoff: { jitter: 2 } }).value).toBe(2);
  });
});
