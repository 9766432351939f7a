/**
 * The operations of the randomized model test as fast-check arbitraries, with their weights.
 * The driver draws one operation a step from the run's seed (`drawOperation`), so a seed always
 * gives the same sequence of operations; which worker process claims what is up to the processes,
 * as it is for users. Add an operation here (its arbitrary, its weight), in `fuzz-types.ts`
 * (its shape) and in `execute.ts` (what it does).
 */
import fc from 'fast-check';
import type { JobHandlerOptions } from 'nest-pg-job-queue';
import type {
  HandlerScript,
  JobRef,
  JobSpec,
  LimitOptions,
  Operation,
  OperationKind,
} from './fuzz-types';

const BACKOFF = { baseDelayMs: 100, maxDelayMs: 400, jitter: 0.2 };
/** Every handler's `timeoutMs`: a hanging job is given up after this, so every run ends. */
export const HANDLER_TIMEOUT_MS = 1_500;

/** The types the worker processes handle, with the options they boot with. */
export const INITIAL_HANDLERS: Record<string, JobHandlerOptions> = {
  'fz.plain': { maxAttempts: 2 },
  'fz.keyed': { concurrencyPerKey: 2, rateLimit: { max: 8, perMs: 1_000, byKey: true } },
  'fz.ordered': { concurrencyPerKey: 1, ordered: true, maxAttempts: 3 },
  'fz.global': { globalConcurrency: 2 },
  'fz.rate': { rateLimit: { max: 10, perMs: 1_000 } },
  'fz.tx': { transaction: true },
  'fz.dead': { maxAttempts: 1, deadLetter: 'fz.dl' },
  'fz.dl': {},
};
for (const options of Object.values(INITIAL_HANDLERS)) {
  options.timeoutMs = HANDLER_TIMEOUT_MS;
  options.backoff = BACKOFF;
  options.maxAttempts ??= 2;
}
export const JOB_TYPES = Object.keys(INITIAL_HANDLERS);
/** The types a deploy may give other limits. */
export const LIMITED_TYPES = ['fz.keyed', 'fz.ordered', 'fz.global', 'fz.rate'];
/** A schedule per type, made at set-up, fired only by `runSchedule` (its cron is yearly). */
export const SCHEDULES = ['fz.sched.plain', 'fz.sched.keyed'];

const KEYS = ['k1', 'k2', 'k3'];
/** Types whose jobs mostly carry a concurrency key: without one, nothing ever waits on a key. */
const KEYED_TYPES = ['fz.keyed', 'fz.ordered'];
const UNIQUE_KEYS = ['u1', 'u2', 'u3', 'u4'];

/** Limits a deploy can switch a type to: added, changed, removed, with and without a rate. */
export const LIMIT_CHOICES: LimitOptions[] = [
  {},
  { concurrencyPerKey: 1 },
  { concurrencyPerKey: 2 },
  { concurrencyPerKey: 3 },
  { concurrencyPerKey: 1, ordered: true },
  { globalConcurrency: 2 },
  { globalConcurrency: 4 },
  { rateLimit: { max: 8, perMs: 1_000, byKey: true } },
  { rateLimit: { max: 4, perMs: 1_000, byKey: true } },
  { rateLimit: { max: 10, perMs: 1_000 } },
  { concurrencyPerKey: 1, rateLimit: { max: 8, perMs: 1_000, byKey: true } },
  { concurrencyPerKey: 2, rateLimit: { max: 8, perMs: 1_000, byKey: true } },
];

/** The default weights: how often each kind is drawn, relative to the others. */
export const DEFAULT_WEIGHTS: Record<OperationKind, number> = {
  enqueue: 30,
  enqueueMany: 10,
  flow: 4,
  cancel: 6,
  retry: 8,
  redrive: 3,
  prune: 3,
  pause: 2,
  runSchedule: 2,
  cancelFlow: 2,
  deploy: 6,
  kill: 2,
  terminateConnections: 2,
  stopStart: 2,
  sleep: 10,
  debounceEdit: 3,
};

/** `uniqueStates` must name every status a key always counts in. */
export const UNFINISHED_KEYED: readonly string[] = [
  'scheduled',
  'pending',
  'waiting',
  'claimed',
  'running',
];
const UNFINISHED = ['scheduled', 'pending', 'waiting', 'blocked', 'claimed', 'running'];

const script: fc.Arbitrary<HandlerScript> = fc.record(
  {
    n: fc.nat(1_000_000),
    b: fc.constantFrom<HandlerScript['b'][]>(
      ...([
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
        'ok',
        'fail',
        'fail',
        'exhaust',
        'exhaust',
        'snooze',
        'hang',
      ] as const),
    ),
    ms: fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 0, max: 300 }) },
      { weight: 1, arbitrary: fc.integer({ min: 300, max: 1_200 }) },
    ),
    progress: fc.boolean(),
    log: fc.boolean(),
  },
  { requiredKeys: ['n', 'b', 'ms'] },
);

const jobRef = (prefer?: string[]): fc.Arbitrary<JobRef> =>
  fc.record({ pick: fc.nat(), ...(prefer ? { prefer: fc.constant(prefer) } : {}) });

const uniqueness = fc.oneof(
  fc.record({ key: fc.constantFrom(...UNIQUE_KEYS) }),
  fc.record({
    key: fc.constantFrom(...UNIQUE_KEYS),
    states: fc
      .subarray(['completed', 'failed', 'cancelled'] as const, { minLength: 1 })
      .map(
        (finished) =>
          [...UNFINISHED_KEYED, ...finished] as NonNullable<JobSpec['unique']>['states'],
      ),
  }),
  fc.record({ key: fc.constantFrom(...UNIQUE_KEYS), forMs: fc.integer({ min: 200, max: 3_000 }) }),
  fc.record({
    key: fc.constantFrom(...UNIQUE_KEYS),
    debounceMs: fc.integer({ min: 0, max: 1_000 }),
  }),
  fc.record({
    key: fc.constantFrom(...UNIQUE_KEYS),
    throttleMs: fc.integer({ min: 200, max: 3_000 }),
  }),
);

/** One job's options; `standalone` false inside a flow, where uniqueness is not allowed. */
const jobSpec = (standalone: boolean): fc.Arbitrary<JobSpec> =>
  fc
    .record(
      {
        type: fc.constantFrom(...JOB_TYPES.filter((type) => type !== 'fz.dl')),
        script,
        priority: fc.integer({ min: 0, max: 200 }),
        delayMs: fc.integer({ min: 1, max: 2_000 }),
        maxAttempts: fc.integer({ min: 1, max: 3 }),
        concurrencyKey: fc.constantFrom(...KEYS),
        ...(standalone
          ? {
              unique: uniqueness,
              dependsOn: fc.array(jobRef(), { minLength: 1, maxLength: 3 }),
              onDependencyFailure: fc.constantFrom<Array<'fail' | 'continue'>>('fail', 'continue'),
            }
          : {}),
      },
      { requiredKeys: ['type', 'script'] },
    )
    .map((spec) => {
      // Keyed types get a key most of the time (a waiting job needs one); debounce refuses a delay.
      if (spec.unique && 'debounceMs' in spec.unique) delete spec.delayMs;
      if (spec.dependsOn && spec.unique) delete spec.unique;
      if (spec.concurrencyKey === undefined && KEYED_TYPES.includes(spec.type)) {
        spec.concurrencyKey = KEYS[spec.script.n % KEYS.length];
      }
      return spec;
    });

const batchItem = jobSpec(true).map(({ dependsOn: _d, onDependencyFailure: _p, ...spec }) => spec);

const arbitraries: Record<OperationKind, fc.Arbitrary<Operation>> = {
  enqueue: fc.record({
    op: fc.constant('enqueue' as const),
    job: jobSpec(true),
    withOutcome: fc.boolean(),
  }),
  enqueueMany: fc.record({
    op: fc.constant('enqueueMany' as const),
    jobs: fc.oneof(
      fc.array(batchItem, { minLength: 1, maxLength: 6 }),
      // A burst on one key: what makes jobs wait for a key's slots or its rate window.
      fc
        .tuple(batchItem, fc.array(script, { minLength: 2, maxLength: 7 }))
        .map(([first, scripts]) => [first, ...scripts.map((more) => ({ ...first, script: more }))]),
    ),
    withOutcome: fc.boolean(),
  }),
  flow: fc
    .array(jobSpec(false), { minLength: 2, maxLength: 5 })
    .chain((jobs) =>
      fc.tuple(
        ...jobs.map((job, i) =>
          fc.record({
            job: fc.constant(job),
            after:
              i === 0 ? fc.constant<number[]>([]) : fc.uniqueArray(fc.nat(i - 1), { maxLength: 2 }),
            policy: fc.constantFrom<Array<'fail' | 'continue'>>('fail', 'continue'),
          }),
        ),
      ),
    )
    .map((steps) => ({
      op: 'flow' as const,
      steps: steps.map(({ job, after, policy }) => ({
        job: after.length > 0 ? { ...job, onDependencyFailure: policy } : job,
        after,
      })),
    })),
  cancel: fc.record({
    op: fc.constant('cancel' as const),
    job: jobRef(UNFINISHED),
    via: fc.constantFrom<Array<'api' | 'cli'>>('api', 'api', 'api', 'cli'),
  }),
  retry: fc.record({
    op: fc.constant('retry' as const),
    job: jobRef(['failed', 'cancelled']),
    via: fc.constantFrom<Array<'api' | 'cli'>>('api', 'api', 'api', 'cli'),
  }),
  redrive: fc.record({
    op: fc.constant('redrive' as const),
    by: fc.array(
      fc.oneof(
        fc.constant({}),
        fc.record({ type: fc.constantFrom(...JOB_TYPES) }),
        fc.record({ ids: fc.array(jobRef(['failed']), { minLength: 1, maxLength: 4 }) }),
      ),
      { minLength: 1, maxLength: 2 },
    ),
  }),
  prune: fc.record(
    {
      op: fc.constant('prune' as const),
      olderThanMs: fc.integer({ min: 0, max: 5_000 }),
      statuses: fc.subarray(['completed', 'failed', 'cancelled'] as const, { minLength: 1 }),
      via: fc.constantFrom<Array<'api' | 'cli'>>('api', 'api', 'cli'),
    },
    { requiredKeys: ['op', 'olderThanMs', 'via'] },
  ),
  pause: fc.record({
    op: fc.constant('pause' as const),
    type: fc.constantFrom(...JOB_TYPES),
    resumeAfterMs: fc.integer({ min: 0, max: 2_000 }),
  }),
  runSchedule: fc.record({
    op: fc.constant('runSchedule' as const),
    name: fc.constantFrom(...SCHEDULES),
  }),
  cancelFlow: fc.record({ op: fc.constant('cancelFlow' as const), flow: fc.nat() }),
  deploy: fc.record({
    op: fc.constant('deploy' as const),
    // Mostly the types with per-key limits: their changes strand the most.
    type: fc.constantFrom(...LIMITED_TYPES, 'fz.keyed', 'fz.keyed', 'fz.ordered'),
    limits: fc.constantFrom(...LIMIT_CHOICES),
    worker: fc.nat(),
    // Half of them reach every worker: an old node's next start would store the old limits
    // again, and its slot releases can hide what the new limits left stranded.
    everywhere: fc.boolean(),
  }),
  kill: fc.record({ op: fc.constant('kill' as const), worker: fc.nat() }),
  terminateConnections: fc.record({
    op: fc.constant('terminateConnections' as const),
    worker: fc.nat(),
  }),
  stopStart: fc.record({
    op: fc.constant('stopStart' as const),
    worker: fc.nat(),
    stoppedMs: fc.integer({ min: 0, max: 1_500 }),
  }),
  sleep: fc.record({ op: fc.constant('sleep' as const), ms: fc.integer({ min: 50, max: 1_000 }) }),
  // An edit while its key's job runs: the first job works long enough to be caught running.
  debounceEdit: fc.record({
    op: fc.constant('debounceEdit' as const),
    job: fc
      .record({
        type: fc.constantFrom(...JOB_TYPES.filter((type) => type !== 'fz.dl')),
        script: script.map((first) => ({ ...first, ms: Math.max(first.ms, 400) })),
        key: fc.constantFrom(...UNIQUE_KEYS),
        debounceMs: fc.integer({ min: 0, max: 300 }),
      })
      .map(({ type, script: first, key, debounceMs }) => ({
        type,
        script: first,
        unique: { key, debounceMs },
        ...(KEYED_TYPES.includes(type) ? { concurrencyKey: KEYS[first.n % KEYS.length] } : {}),
      })),
    edit: script,
  }),
};

/** The operation arbitrary under `weights` (kinds weighted 0 are never drawn). */
export function operationArbitrary(
  weights: Record<OperationKind, number>,
): fc.Arbitrary<Operation> {
  const weighted = (Object.keys(arbitraries) as OperationKind[])
    .filter((kind) => weights[kind] > 0)
    .map((kind) => ({ weight: weights[kind], arbitrary: arbitraries[kind] }));
  return fc.oneof(...weighted);
}

/** Step `step`'s operation of the run with `seed`: the same pair always gives the same one. */
export function drawOperation(
  arbitrary: fc.Arbitrary<Operation>,
  seed: number,
  step: number,
): Operation {
  return fc.sample(arbitrary, { seed: (Math.imul(seed, 0x9e3779b1) + step) | 0, numRuns: 1 })[0];
}
