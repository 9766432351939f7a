import { JobStatus } from '../../entities/job-status.enum';
import { EnqueueOptions } from '../../interfaces/enqueue-options.interface';
import { UsageError } from '../cli.errors';
import { Command, numeric, stringOption } from '../command';
import { pointInFuture } from '../duration';
import { jobDetail, jobTable, logTable } from '../job-format';
import { plain } from '../terminal';

/** `show` prints at most this many entries of the job's log (its first). */
export const SHOW_LOG_LIMIT = 1_000;

export const listCommand: Command = {
  name: 'list',
  usage: 'list [--type TYPE] [--status STATUS] [--limit N] [--cursor CURSOR]',
  summary: `jobs, newest first, a page at a time (STATUS: ${Object.values(JobStatus).join(', ')})`,
  options: {
    type: { type: 'string' },
    status: { type: 'string' },
    limit: { type: 'string' },
    cursor: { type: 'string' },
  },
  run: async ({ options, out, withQueue }) => {
    const page = await withQueue((queue) =>
      queue.listJobs({
        type: stringOption(options, 'type'),
        status: stringOption(options, 'status') as JobStatus | undefined,
        limit: numeric(stringOption(options, 'limit')) as number | undefined,
        cursor: stringOption(options, 'cursor'),
      }),
    );
    out.result(page, () => [
      ...jobTable(out, page.jobs),
      ...(page.nextCursor ? [`next page: --cursor ${page.nextCursor}`] : []),
    ]);
  },
};

export const showCommand: Command = {
  name: 'show',
  usage: 'show <id>',
  summary: "one job, with its log (what the queue did with it, its handler's lines)",
  args: ['id'],
  run: async ({ args: [id], out, withQueue }) => {
    const { job, events } = await withQueue(async (queue) => ({
      job: await queue.getJob(id),
      events: await queue.jobEvents(id, { limit: SHOW_LOG_LIMIT }),
    }));
    out.result({ job, events }, () => [...jobDetail(out, job), '', ...logTable(out, events)]);
  },
};

/** `retry <id>` and `cancel <id>`: one job, one call, the job as it is after. */
function oneJobCommand(name: 'retry' | 'cancel', summary: string, done: string): Command {
  return {
    name,
    usage: `${name} <id>`,
    summary,
    args: ['id'],
    run: async ({ args: [id], out, withQueue }) => {
      const job = await withQueue((queue) => queue[name](id));
      out.result({ job }, () => [`job ${job.id} ${done} (${job.status})`]);
    },
  };
}

export const retryCommand = oneJobCommand(
  'retry',
  'a failed or cancelled job again, now, with fresh attempts',
  'will run again',
);

export const cancelCommand = oneJobCommand('cancel', 'an unfinished job', 'cancelled');

export const enqueueCommand: Command = {
  name: 'enqueue',
  usage: 'enqueue <type> <json> [--priority N] [--run-at TIME] [--unique-key KEY]',
  summary: 'adds a job (data as JSON; --run-at an ISO time or a delay such as 15m)',
  args: ['type', 'json'],
  options: {
    priority: { type: 'string' },
    'run-at': { type: 'string' },
    'unique-key': { type: 'string' },
  },
  run: async ({ args: [type, json], options, out, now, withQueue }) => {
    let data: unknown;
    try {
      data = JSON.parse(json);
    } catch {
      throw new UsageError(`<json>: not JSON (quote it for the shell: '{"month":"2026-11"}')`);
    }
    const runAt = stringOption(options, 'run-at');
    const jobOptions = {
      priority: numeric(stringOption(options, 'priority')),
      runAt: runAt === undefined ? undefined : pointInFuture('--run-at', runAt, now),
      uniqueKey: stringOption(options, 'unique-key'),
    };
    const defined = Object.fromEntries(
      Object.entries(jobOptions).filter(([, value]) => value !== undefined),
    ) as EnqueueOptions;
    const { job, outcome } = await withQueue((queue) =>
      queue.enqueueWithOutcome(type, data, defined),
    );
    out.result({ job, outcome }, () => [
      `job ${job.id} ${outcome} (${plain(job.jobType)}, ${job.status})`,
    ]);
  },
};
