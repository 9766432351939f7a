/**
 * What each operation does: public calls on the driver's `QueueService` (or the same through
 * the CLI's `main()`), and faults on the worker processes. Every public call goes through
 * `publicCall`, which checks invariant 7 (a typed error, never a raw deadlock, serialization or
 * unique-violation code) on whatever it throws. Returns one line for the operation log.
 */
import { PassThrough } from 'node:stream';
import { DataSource } from 'typeorm';
import {
  EnqueueManyItem,
  EnqueueOptions,
  FlowStep,
  JobQueueDatabaseError,
  JobQueueError,
  JobQueueUnavailableError,
  QueueService,
  RedriveOptions,
} from 'nest-pg-job-queue';
import { main as cliMain } from '../../libs/job-queue/src/cli/main';
import type { Fleet } from './fleet';
import type { HandlerScript, JobRef, JobSpec, Operation } from './fuzz-types';
import type { FuzzModel } from './model';
import { debounceKeptEdit } from './invariants';

export interface ExecutionContext {
  queue: QueueService;
  dataSource: DataSource;
  fleet: Fleet;
  model: FuzzModel;
  databaseUrl: string;
  /** The last prune's call, for invariant 6's "it deleted what it was asked to". */
  lastPrune?: { startedDbMs: number; olderThanMs: number; statuses?: string[] };
  /** The last redrive's calls (one, or two at once), for invariant 9's "it moved what it could". */
  lastRedrive?: { startedDbMs: number; calls: RedriveOptions[]; succeeded: boolean };
}

const FORBIDDEN_CODES = ['40P01', '40001', '23505'];

/** Every code an error carries, on itself or along its `cause` chain, and in its text. */
function carriedCodes(error: unknown): string[] {
  const found = new Set<string>();
  for (
    let e: unknown = error, depth = 0;
    e && depth < 6;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') found.add(code);
    const text = `${(e as Error).message ?? ''}`;
    for (const forbidden of FORBIDDEN_CODES) if (text.includes(forbidden)) found.add(forbidden);
  }
  return [...found];
}

/** Invariant 7 on one call: its error, if any, is the package's and names no forbidden code. */
export async function publicCall<T>(
  context: ExecutionContext,
  what: string,
  call: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: string }> {
  context.model.checked('7 typed errors');
  try {
    return { ok: true, value: await call() };
  } catch (error) {
    const codes = carriedCodes(error).filter((code) => FORBIDDEN_CODES.includes(code));
    const name = (error as Error)?.constructor?.name ?? typeof error;
    if (!(error instanceof JobQueueError)) {
      context.model.violate(
        '7 typed errors',
        `${what} threw ${name}, not a JobQueueError: ${(error as Error)?.message}`,
      );
    } else if (codes.length > 0) {
      context.model.violate(
        '7 typed errors',
        `${what} threw ${name} carrying SQLSTATE ${codes.join(', ')}: ${error.message}`,
      );
    } else if (
      error instanceof JobQueueDatabaseError ||
      error instanceof JobQueueUnavailableError
    ) {
      context.model.violate(
        '7 typed errors',
        `${what} was refused by the database (${name} ${(error as JobQueueDatabaseError).code ?? ''}): ${error.message}`,
      );
    }
    return { ok: false, error: `${name}: ${(error as Error).message.slice(0, 160)}` };
  }
}

/** The CLI's `main()` in this process, as an operator runs it; exit 2 (bad usage) is a violation. */
async function cli(context: ExecutionContext, args: string[]): Promise<string> {
  context.model.checked('7 typed errors');
  const streams = {
    stdin: new PassThrough(),
    stdout: new PassThrough(),
    stderr: new PassThrough(),
  };
  let out = '';
  streams.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  streams.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const code = await cliMain([...args, '--json'], {
    ...streams,
    env: { DATABASE_URL: context.databaseUrl },
  });
  const forbidden = FORBIDDEN_CODES.filter((c) => out.includes(c));
  if (code === 2 || forbidden.length > 0 || /QueryFailedError|at .*\.js:\d+/.test(out)) {
    context.model.violate(
      '7 typed errors',
      `CLI ${args.join(' ')} exited ${code}: ${out.trim().slice(0, 300)}`,
    );
  }
  return `cli exit ${code}${code === 0 ? '' : `: ${out.trim().split('\n')[0].slice(0, 160)}`}`;
}

async function resolveRefs(context: ExecutionContext, refs: JobRef[]): Promise<string[]> {
  const known = context.model.jobIds;
  if (known.length === 0) return [];
  const rows: Array<{ id: string; status: string }> = await context.dataSource.query(
    'SELECT id::text AS id, status FROM job_queue.jobs WHERE id = ANY ($1::bigint[]) ORDER BY id',
    [known],
  );
  // Jobs that still exist, those in a preferred status first; a pruned one only when none is left.
  return refs.map((ref) => {
    const preferred = ref.prefer ? rows.filter((row) => ref.prefer!.includes(row.status)) : [];
    const existing = preferred.length > 0 ? preferred : rows;
    const pool = existing.length > 0 ? existing.map((row) => row.id) : known;
    return pool[ref.pick % pool.length];
  });
}

function jobOptions(spec: JobSpec): EnqueueOptions {
  const opts: EnqueueOptions = {};
  if (spec.priority !== undefined) opts.priority = spec.priority;
  if (spec.delayMs !== undefined) opts.delayMs = spec.delayMs;
  if (spec.maxAttempts !== undefined) opts.maxAttempts = spec.maxAttempts;
  if (spec.concurrencyKey !== undefined) opts.concurrencyKey = spec.concurrencyKey;
  if (spec.unique) {
    opts.uniqueKey = spec.unique.key;
    if (spec.unique.states) opts.uniqueStates = spec.unique.states;
    if (spec.unique.forMs !== undefined) opts.uniqueForMs = spec.unique.forMs;
    if (spec.unique.debounceMs !== undefined) opts.debounceMs = spec.unique.debounceMs;
    if (spec.unique.throttleMs !== undefined) opts.throttleMs = spec.unique.throttleMs;
  }
  return opts;
}

/**
 * Invariant 7 on a refused write: one statement (or one batch), so nothing of it may be left,
 * neither a new job nor a debounced job's data replaced. Returns `error` for the log.
 */
async function wroteNothing(
  context: ExecutionContext,
  what: string,
  error: string,
): Promise<string> {
  const [{ ids }] = await context.dataSource.query(
    `SELECT string_agg(id::text, ',') AS ids FROM job_queue.jobs WHERE data->>'s' = $1`,
    [String(context.model.step)],
  );
  if (ids) {
    context.model.violate('7 typed errors', `${what} failed (${error}), yet left job(s) ${ids}`);
  }
  return error;
}

const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

/** The statuses of a job that has not started. */
const NOT_STARTED = ['scheduled', 'pending', 'waiting', 'blocked'];

/**
 * A debounced enqueue of `spec`, then, once the job holding its key has started (or after 3 s:
 * limits, pauses and kills may keep it from starting), a second call of the key with `edit`'s
 * data, which invariant 10 checks by its `n`.
 */
async function debounceEdit(
  context: ExecutionContext,
  spec: JobSpec,
  edit: HandlerScript,
): Promise<string> {
  const { queue, model, dataSource } = context;
  spec.script.s = model.step;
  const first = await publicCall(context, `enqueue(${spec.type}, debounced)`, () =>
    queue.enqueueWithOutcome(spec.type, spec.script, jobOptions(spec)),
  );
  if (!first.ok) return wroteNothing(context, 'enqueue', first.error);
  model.addJobs([first.value.job.id]);
  const holder = first.value.job.id;
  const deadline = Date.now() + 3_000;
  while (Date.now() < deadline) {
    const [row] = await dataSource.query(`SELECT status FROM job_queue.jobs WHERE id = $1`, [
      holder,
    ]);
    if (!row || !NOT_STARTED.includes(row.status)) break;
    await sleep(50);
  }
  const data: HandlerScript = { ...edit, n: spec.script.n + 1, s: model.step };
  const second = await publicCall(context, `enqueue(${spec.type}, edit)`, () =>
    queue.enqueueWithOutcome(spec.type, data, jobOptions(spec)),
  );
  if (!second.ok) return `job ${holder} ${first.value.outcome}; edit: ${second.error}`;
  await debounceKeptEdit(context, spec, second.value.job, (kept) => kept?.n === data.n);
  model.addJobs([second.value.job.id]);
  return `job ${holder} ${first.value.outcome}; edit: job ${second.value.job.id} ${second.value.outcome}`;
}

export async function execute(context: ExecutionContext, operation: Operation): Promise<string> {
  const { queue, model, fleet } = context;
  switch (operation.op) {
    case 'enqueue': {
      const { job } = operation;
      job.script.s = model.step;
      const opts = jobOptions(job);
      if (job.dependsOn) {
        opts.dependsOn = [...new Set(await resolveRefs(context, job.dependsOn))];
        if (opts.dependsOn.length === 0) delete opts.dependsOn;
        else if (job.onDependencyFailure) opts.onDependencyFailure = job.onDependencyFailure;
      }
      const result = await publicCall(context, `enqueue(${job.type})`, () =>
        operation.withOutcome
          ? queue.enqueueWithOutcome(job.type, job.script, opts)
          : queue
              .enqueue(job.type, job.script, opts)
              .then((created) => ({ job: created, outcome: '-' })),
      );
      if (!result.ok) return wroteNothing(context, 'enqueue', result.error);
      await debounceKeptEdit(context, job, result.value.job);
      model.addJobs([result.value.job.id]);
      return `job ${result.value.job.id} ${result.value.outcome}${opts.dependsOn ? ` after ${opts.dependsOn.join(',')}` : ''}`;
    }
    case 'enqueueMany': {
      const items: EnqueueManyItem[] = operation.jobs.map((spec) => ({
        type: spec.type,
        data: { ...spec.script, s: model.step },
        ...jobOptions(spec),
      }));
      const result = await publicCall(context, 'enqueueMany', () =>
        operation.withOutcome
          ? queue.enqueueManyWithOutcome(items)
          : queue.enqueueMany(items).then((jobs) => jobs.map((job) => ({ job, outcome: '-' }))),
      );
      if (!result.ok) return wroteNothing(context, 'enqueueMany', result.error);
      for (const [i, r] of result.value.entries()) {
        await debounceKeptEdit(context, operation.jobs[i], r.job);
      }
      model.addJobs(result.value.map((r) => r.job.id));
      return `jobs ${result.value.map((r) => `${r.job.id} ${r.outcome}`).join(', ')}`;
    }
    case 'flow': {
      const steps: FlowStep[] = operation.steps.map(({ job, after }, i) => {
        const { uniqueKey: _u, dependsOn: _d, ...opts } = jobOptions(job);
        return {
          name: `s${i}`,
          type: job.type,
          data: { ...job.script, s: model.step },
          ...opts,
          ...(after.length > 0
            ? { dependsOn: after.map((a) => `s${a}`), onDependencyFailure: job.onDependencyFailure }
            : {}),
        };
      });
      const result = await publicCall(context, 'flow', () => queue.flow({ steps }));
      if (!result.ok) return wroteNothing(context, 'flow', result.error);
      model.addJobs(result.value.jobs.map((job) => job.id));
      model.flowIds.push(result.value.flowId);
      return `flow ${result.value.flowId}: ${result.value.jobs.map((job) => job.id).join(',')}`;
    }
    case 'cancel':
    case 'retry': {
      const [id] = await resolveRefs(context, [operation.job]);
      if (id === undefined) return 'no job yet';
      if (operation.via === 'cli') return `${id}: ${await cli(context, [operation.op, id])}`;
      const result = await publicCall(context, `${operation.op}(${id})`, () =>
        operation.op === 'cancel' ? queue.cancel(id) : queue.retry(id),
      );
      return result.ok ? `${id} now ${result.value.status}` : `${id}: ${result.error}`;
    }
    case 'redrive': {
      const [{ now }] = await context.dataSource.query(
        'SELECT extract(epoch FROM now()) * 1000 AS now',
      );
      const calls = await Promise.all(
        operation.by.map(async (by) => {
          const opts: RedriveOptions = by.ids
            ? { ids: [...new Set(await resolveRefs(context, by.ids))] }
            : { ...(by.type ? { type: by.type } : {}) };
          return {
            opts,
            call: publicCall(context, `redrive(${JSON.stringify(opts)})`, () =>
              queue.redrive(opts),
            ),
          };
        }),
      );
      const results = await Promise.all(calls.map((c) => c.call));
      context.lastRedrive = {
        startedDbMs: Number(now),
        calls: calls.map((c) => c.opts),
        succeeded: results.every((r) => r.ok),
      };
      return results
        .map((r, i) => `${JSON.stringify(calls[i].opts)}: ${r.ok ? r.value : r.error}`)
        .join('; ');
    }
    case 'prune': {
      const [{ now }] = await context.dataSource.query(
        'SELECT extract(epoch FROM now()) * 1000 AS now',
      );
      const started = Number(now);
      let result: string;
      if (operation.via === 'cli') {
        const args = [
          'prune',
          '--older-than',
          new Date(Date.now() - operation.olderThanMs).toISOString(),
          '--yes',
        ];
        for (const status of operation.statuses ?? []) args.push('--status', status);
        result = await cli(context, args);
      } else {
        const call = await publicCall(context, 'prune', () =>
          queue.prune({
            olderThanMs: operation.olderThanMs,
            ...(operation.statuses ? { statuses: operation.statuses } : {}),
          }),
        );
        result = call.ok ? `deleted ${call.value}` : call.error;
      }
      context.lastPrune = {
        startedDbMs: started,
        olderThanMs: operation.olderThanMs,
        statuses: operation.statuses,
      };
      return result;
    }
    case 'pause': {
      const { type, resumeAfterMs } = operation;
      if (model.paused.has(type)) return `${type} already paused`;
      const result = await publicCall(context, `pause(${type})`, () => queue.pause(type));
      if (!result.ok) return result.error;
      model.paused.set(
        type,
        sleep(resumeAfterMs).then(async () => {
          await publicCall(context, `resume(${type})`, () => queue.resume(type));
          model.paused.delete(type);
        }),
      );
      return `paused ${type} for ${resumeAfterMs} ms`;
    }
    case 'runSchedule': {
      const result = await publicCall(context, `runSchedule(${operation.name})`, () =>
        queue.runSchedule(operation.name),
      );
      if (!result.ok) return result.error;
      model.addJobs([result.value.id]);
      return `job ${result.value.id}`;
    }
    case 'cancelFlow': {
      if (model.flowIds.length === 0) return 'no flow yet';
      const flowId = model.flowIds[operation.flow % model.flowIds.length];
      const result = await publicCall(context, `cancelFlow(${flowId})`, () =>
        queue.cancelFlow(flowId),
      );
      return result.ok ? `${flowId}: ${result.value.length} cancelled` : result.error;
    }
    case 'deploy': {
      // The new limits reach job_types when the restarted worker boots (fuzz_limits records it).
      const options = fleet.handlers[operation.type];
      for (const key of ['concurrencyPerKey', 'globalConcurrency', 'ordered', 'rateLimit'] as const)
        delete options[key];
      Object.assign(options, structuredClone(operation.limits));
      const slots = operation.everywhere
        ? Array.from({ length: fleet.size }, (_, slot) => slot)
        : [fleet.slot(operation.worker)];
      const workerIds: string[] = [];
      for (const slot of slots) workerIds.push(await fleet.restart(slot, 'SIGTERM'));
      return `${operation.type} → ${JSON.stringify(operation.limits)} on ${workerIds.join(', ')}`;
    }
    case 'kill': {
      const workerId = await fleet.restart(fleet.slot(operation.worker), 'SIGKILL');
      return `killed; now ${workerId}`;
    }
    case 'terminateConnections': {
      const slot = fleet.slot(operation.worker);
      const [{ n }] = await context.dataSource.query(
        `SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity
         WHERE application_name LIKE ANY ($1::text[]) AND pid <> pg_backend_pid()`,
        [fleet.connectionPatterns(slot)],
      );
      return `${n} connection(s) of ${fleet.workerId(slot)} terminated`;
    }
    case 'stopStart': {
      const slot = fleet.slot(operation.worker);
      await fleet.stopStart(slot, operation.stoppedMs);
      return `${fleet.workerId(slot)} stopped ${operation.stoppedMs} ms`;
    }
    case 'sleep':
      await sleep(operation.ms);
      return '';
    case 'debounceEdit':
      return debounceEdit(context, operation.job, operation.edit);
  }
}
