import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from 'pg';
import { DataSource } from 'typeorm';
import { jobQueueMigrations } from 'nest-pg-job-queue';
import { createTestDatabase, TestDatabase } from '../support/database';
import { CliRun, installPackedCli, PackedCli } from '../support/packed-cli';
import { main } from '../../libs/job-queue/src/cli/main';
import { connectionFailure } from '../../libs/job-queue/src/cli/connection';

const PACKAGE = join(__dirname, '..', '..', 'libs', 'job-queue');
const README = join(PACKAGE, 'README.md');
/** A command, Nest's boot and the pool's close included, on this 2-core machine: well under. */
const PROMPT_MS = 10_000;

/** The ```sh block after `<!-- cli-examples -->` in the package README, one command a line. */
function readmeExamples(): string[] {
  const match = /<!-- cli-examples -->\n```sh\n([\s\S]*?)```/.exec(readFileSync(README, 'utf8'));
  if (!match) throw new Error('the README has no <!-- cli-examples --> block');
  return match[1].split('\n').filter((line) => line.trim() !== '');
}

function parsed<T = Record<string, unknown>>(run: CliRun): T {
  return JSON.parse(run.stdout) as T;
}

function jsonError(run: CliRun): { code: string; message: string } {
  return (JSON.parse(run.stderr) as { error: { code: string; message: string } }).error;
}

describe('the nest-pg-job-queue command line, from the packed tarball (npx)', () => {
  let cli: PackedCli;
  let db: TestDatabase;
  let readmeDb: TestDatabase;
  let sql: Client;
  const env = (): NodeJS.ProcessEnv => ({ DATABASE_URL: db.url, NO_COLOR: '' });
  const run = (...args: string[]) => cli.run(args, env());
  const runJson = (...args: string[]) => cli.run([...args, '--json'], env());
  /**
   * The same command line through the CLI's `main()` in this process, from the sources, no
   * terminal: for the finer refusals, so that the file stays quick on two cores.
   */
  async function local(...args: string[]): Promise<CliRun> {
    const started = performance.now();
    const streams = {
      stdin: new PassThrough(),
      stdout: new PassThrough(),
      stderr: new PassThrough(),
    };
    const text = { stdout: '', stderr: '' };
    streams.stdout.on('data', (chunk: Buffer) => (text.stdout += chunk.toString()));
    streams.stderr.on('data', (chunk: Buffer) => (text.stderr += chunk.toString()));
    const code = await main(args, { ...streams, env: { DATABASE_URL: db.url } });
    return { code, ...text, ms: performance.now() - started };
  }

  beforeAll(async () => {
    cli = installPackedCli();
    db = await createTestDatabase({ migrated: false });
    readmeDb = await createTestDatabase({ migrated: false });
    sql = new Client({ connectionString: db.url });
    await sql.connect();
  }, 120_000);

  afterAll(async () => {
    await sql?.end();
    await db?.drop();
    await readmeDb?.drop();
    cli?.remove();
  });

  /** A job of `type` in `status`, as a worker would leave it; returns its id. */
  async function jobIn(type: string, status: string): Promise<string> {
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO job_queue.jobs (job_type, status, attempts, max_attempts, last_error,
                                   completed_at)
       VALUES ($1, $2, 3, 3, CASE WHEN $2 = 'failed' THEN 'boom' END,
               CASE WHEN $2 IN ('completed', 'failed', 'cancelled') THEN now() END)
       RETURNING id::text`,
      [type, status],
    );
    return rows[0].id;
  }

  /** A job of `type` waiting for one unfinished dependency, as `dependsOn` leaves it. */
  async function blockedJob(type: string): Promise<string> {
    const id = await jobIn(type, 'pending');
    await sql.query(
      `UPDATE job_queue.jobs SET status = 'blocked', unfinished_dependencies = 1,
                                 on_dependency_failure = 'fail' WHERE id = $1`,
      [id],
    );
    return id;
  }

  /**
   * A flow of `type` as `flow()` leaves it once its first step completed: `extract` completed,
   * `clean` (after extract) pending, `load` (after clean) blocked on it; returns its id and the
   * jobs' ids in that order.
   */
  async function flowOf(type: string): Promise<{ flowId: string; ids: string[] }> {
    const { rows } = await sql.query<{ flow_id: string; ids: string[] }>(
      `WITH flow AS (SELECT gen_random_uuid() AS id),
       made AS (
         INSERT INTO job_queue.jobs (job_type, status, attempts, max_attempts, completed_at,
                                     flow_id, step_name, unfinished_dependencies,
                                     on_dependency_failure, has_dependants)
         SELECT $1, s.status, s.attempts, 3, s.completed_at, flow.id, s.step, s.unfinished,
                s.policy, s.has_dependants
         FROM flow, (VALUES (1, 'completed', 1, now(), 'extract', 0, NULL, true),
                            (2, 'pending', 0, NULL, 'clean', 0, 'fail', true),
                            (3, 'blocked', 0, NULL, 'load', 1, 'fail', false))
                    AS s(n, status, attempts, completed_at, step, unfinished, policy, has_dependants)
         ORDER BY s.n
         RETURNING id, flow_id, step_name
       )
       SELECT (SELECT id::text FROM flow) AS flow_id,
              array_agg(id::text ORDER BY id) AS ids
       FROM made`,
      [type],
    );
    const { flow_id: flowId, ids } = rows[0];
    await sql.query(
      `INSERT INTO job_queue.job_dependencies (dependency_id, job_id)
       VALUES ($1, $2), ($2, $3)`,
      ids,
    );
    return { flowId, ids };
  }

  async function statusesOf(ids: string[]): Promise<string[]> {
    const statuses: string[] = [];
    for (const id of ids) statuses.push(await statusOf(id));
    return statuses;
  }

  async function statusOf(id: string): Promise<string> {
    const { rows } = await sql.query<{ status: string }>(
      `SELECT status FROM job_queue.jobs WHERE id = $1`,
      [id],
    );
    return rows[0].status;
  }

  it('npx finds the bin of the installed tarball', async () => {
    const version = await cli.npx(['--version']);
    const { version: packed } = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as {
      version: string;
    };
    expect(version).toMatchObject({ code: 0, stdout: `${packed}\n`, stderr: '' });
    const help = await cli.npx(['--help']);
    expect(help.stdout).toMatch(/^usage: nest-pg-job-queue <command>/);
  });

  describe('before migrate', () => {
    it('says the schema is not migrated and what to run, exit 1', async () => {
      const human = await run('stats');
      expect(human.code).toBe(1);
      expect(human.stderr).toBe(
        'error: the queue\'s schema "job_queue" is not migrated to this version: run `nest-pg-job-queue migrate`\n',
      );
      const json = await runJson('list');
      expect(json.code).toBe(1);
      expect(jsonError(json)).toEqual({ code: 'not_migrated', message: expect.any(String) });
    });

    it("migrate runs the queue's migrations where TypeORM records them, once", async () => {
      const first = await runJson('migrate', '--migrations-table', 'app_migrations');
      expect(first.code).toBe(0);
      const names = jobQueueMigrations.map((migration) => migration.name);
      expect(parsed(first)).toEqual({ applied: names.map((n) => expect.stringMatching(n)) });
      const again = await runJson('migrate', '--migrations-table', 'app_migrations');
      expect(parsed(again)).toEqual({ applied: [] });
      // The app's own data source, with the same table, finds nothing left to run.
      const app = new DataSource({
        type: 'postgres',
        url: db.url,
        migrations: jobQueueMigrations,
        migrationsTableName: 'app_migrations',
      });
      await app.initialize();
      try {
        expect(await app.showMigrations()).toBe(false);
      } finally {
        await app.destroy();
      }
      const human = await run('migrate', '--migrations-table', 'app_migrations');
      expect(human.stdout).toBe('the queue is migrated: nothing to run\n');
    });
  });

  describe('with a migrated schema', () => {
    beforeEach(() =>
      sql.query(`TRUNCATE job_queue.jobs, job_queue.job_events, job_queue.job_schedules`),
    );

    it('enqueue: the job and what the enqueue did; bad JSON, values and times are bad usage', async () => {
      const created = await runJson(
        'enqueue',
        'report',
        '{"month":"2026-11"}',
        '--priority',
        '150',
        '--unique-key',
        'r:11',
      );
      expect(created.code).toBe(0);
      const { job, outcome } = parsed<{ job: Record<string, unknown>; outcome: string }>(created);
      expect(outcome).toBe('created');
      expect(job).toMatchObject({
        jobType: 'report',
        data: { month: '2026-11' },
        priority: 150,
        status: 'pending',
        uniqueKey: 'r:11',
      });
      const skipped = await runJson('enqueue', 'report', '{}', '--unique-key', 'r:11');
      expect(parsed(skipped)).toMatchObject({ outcome: 'skipped', job: { id: job.id } });

      const later = parsed<{ job: { runAt: string; status: string } }>(
        await local('enqueue', 'report', 'null', '--run-at', '15m', '--json'),
      );
      expect(later.job.status).toBe('scheduled');
      expect(Date.parse(later.job.runAt) - Date.now()).toBeGreaterThan(14 * 60_000);

      const human = await run('enqueue', 'report', '[1]');
      expect(human).toMatchObject({
        code: 0,
        stdout: expect.stringMatching(/^job \d+ created \(report, pending\)\n$/),
      });

      const badJson = await local('enqueue', 'report', '{month}', '--json');
      expect(badJson.code).toBe(2);
      expect(jsonError(badJson).code).toBe('usage');
      const badPriority = await run('enqueue', 'report', '{}', '--priority', 'high');
      expect(badPriority.code).toBe(2);
      expect(badPriority.stderr).toMatch(
        /^error: Invalid job priority: 'high'\. .*\nusage: nest-pg-job-queue enqueue <type> <json>/,
      );
      const badTime = await local('enqueue', 'report', '{}', '--run-at', 'tomorrow');
      expect(badTime.code).toBe(2);
      expect(badTime.stderr).toMatch(/--run-at: "tomorrow" is not an ISO timestamp/);
    });

    it('list: a page of jobs and its cursor; the next page; a bad filter is bad usage', async () => {
      const ids = [
        await jobIn('mail', 'pending'),
        await jobIn('mail', 'failed'),
        await jobIn('sms', 'pending'),
      ];
      const first = parsed<{ jobs: Array<{ id: string; data?: unknown }>; nextCursor: string }>(
        await runJson('list', '--limit', '2'),
      );
      expect(first.jobs.map((job) => job.id)).toEqual([ids[2], ids[1]]);
      expect(first.jobs[0]).not.toHaveProperty('data');
      const second = parsed<{ jobs: Array<{ id: string }>; nextCursor: null }>(
        await local('list', '--limit', '2', '--cursor', first.nextCursor, '--json'),
      );
      expect(second).toEqual({ jobs: [expect.objectContaining({ id: ids[0] })], nextCursor: null });
      const failed = parsed<{ jobs: Array<{ id: string }> }>(
        await local('list', '--type', 'mail', '--status', 'failed', '--json'),
      );
      expect(failed.jobs.map((job) => job.id)).toEqual([ids[1]]);

      const human = await run('list');
      expect(human.code).toBe(0);
      expect(human.stdout.split('\n')[0]).toMatch(
        /^ID\s+TYPE\s+STATUS\s+PRIORITY\s+ATTEMPTS\s+RUN AT\s+LAST ERROR$/,
      );
      expect(human.stdout).toContain('boom');
      expect(human.stdout).not.toContain('\x1b');

      const badStatus = await runJson('list', '--status', 'done');
      expect(badStatus.code).toBe(2);
      expect(jsonError(badStatus)).toEqual({
        code: 'invalid_input',
        message: expect.stringContaining('status'),
      });
      const badCursor = await local('list', '--cursor', 'nope');
      expect(badCursor.code).toBe(2);

      const blocked = await blockedJob('mail');
      const onlyBlocked = parsed<{ jobs: Array<Record<string, unknown>> }>(
        await local('list', '--status', 'blocked', '--json'),
      );
      expect(onlyBlocked.jobs).toEqual([
        expect.objectContaining({ id: blocked, status: 'blocked', unfinishedDependencies: 1 }),
      ]);
      expect((await local('list')).stdout).toMatch(
        new RegExp(`^${blocked}\\s+mail\\s+blocked\\s`, 'm'),
      );
    });

    it('show: the job and its log; an unknown id exits 1, a bad one 2', async () => {
      const { job } = parsed<{ job: { id: string } }>(
        await runJson('enqueue', 'report', '{"a":1}'),
      );
      expect((await run('cancel', job.id)).code).toBe(0);
      const shown = parsed<{
        job: { id: string; status: string; data: unknown };
        events: Array<{ kind: string }>;
      }>(await runJson('show', job.id));
      expect(shown.job).toMatchObject({ id: job.id, status: 'cancelled', data: { a: 1 } });
      expect(shown.events.map((event) => event.kind)).toEqual(['cancelled']);
      const human = await local('show', job.id);
      expect(human.stdout).toMatch(/^id +\d+\ntype +report\nstatus +cancelled\n/);
      expect(human.stdout).toMatch(/AT\s+ATTEMPT\s+KIND\s+MESSAGE\n.*cancelled/);

      const unknown = await run('show', '999999');
      expect(unknown).toMatchObject({
        code: 1,
        stdout: '',
        stderr: "error: No job with id '999999' exists.\n",
      });
      const unknownJson = await local('show', '999999', '--json');
      expect(jsonError(unknownJson).code).toBe('not_found');
      const bad = await local('show', 'abc', '--json');
      expect(bad.code).toBe(2);
      expect(jsonError(bad).code).toBe('invalid_input');
    });

    it('retry and cancel: the job after; a refused state exits 1 saying so', async () => {
      const failed = await jobIn('mail', 'failed');
      const retried = await runJson('retry', failed);
      expect(retried.code).toBe(0);
      expect(parsed(retried)).toEqual({
        job: expect.objectContaining({ id: failed, status: 'pending', attempts: 0 }),
      });

      const completed = await jobIn('mail', 'completed');
      const refused = await run('retry', completed);
      expect(refused).toMatchObject({
        code: 1,
        stderr: `error: Job ${completed} is completed and cannot be retried.\n`,
      });
      expect(jsonError(await local('retry', completed, '--json')).code).toBe('state_conflict');
      expect(await statusOf(completed)).toBe('completed');

      const cancelled = await runJson('cancel', failed);
      expect(parsed(cancelled)).toEqual({
        job: expect.objectContaining({ id: failed, status: 'cancelled' }),
      });
      const again = await local('cancel', failed);
      expect(again.code).toBe(1);
      expect((await local('retry', '999999')).code).toBe(1);
    });

    it('flow: its jobs in order, as a table and as JSON; an unknown flow exits 1, a bad id 2', async () => {
      const { flowId, ids } = await flowOf('etl');
      const json = await runJson('flow', flowId);
      expect(json.code).toBe(0);
      const shown = parsed<{ flowId: string; jobs: Array<Record<string, unknown>> }>(json);
      expect(shown.flowId).toBe(flowId);
      expect(
        shown.jobs.map((job) => [job.id, job.stepName, job.status, job.unfinishedDependencies]),
      ).toEqual([
        [ids[0], 'extract', 'completed', 0],
        [ids[1], 'clean', 'pending', 0],
        [ids[2], 'load', 'blocked', 1],
      ]);
      expect(shown.jobs[0]).toMatchObject({ flowId, jobType: 'etl', hasDependants: true });

      const human = await local('flow', flowId.toUpperCase());
      expect(human.code).toBe(0);
      const lines = human.stdout.split('\n');
      expect(lines[0]).toMatch(/^ID\s+STEP\s+TYPE\s+STATUS\s+ATTEMPTS\s+WAITING ON\s+FINISHED$/);
      expect(lines[1]).toMatch(
        new RegExp(`^${ids[0]}\\s+extract\\s+etl\\s+completed\\s+1/3\\s+-\\s+\\d{4}-`),
      );
      expect(lines[2]).toMatch(
        new RegExp(`^${ids[1]}\\s+clean\\s+etl\\s+pending\\s+0/3\\s+0\\s+-$`),
      );
      expect(lines[3]).toMatch(
        new RegExp(`^${ids[2]}\\s+load\\s+etl\\s+blocked\\s+0/3\\s+1\\s+-$`),
      );
      expect(lines.slice(4)).toEqual(['']);

      const unknownId = '7d1f0c7e-2b4a-4c39-8f0e-5a6b7c8d9e0f';
      const unknown = await run('flow', unknownId);
      expect(unknown).toMatchObject({
        code: 1,
        stdout: '',
        stderr: expect.stringMatching(new RegExp(`^error: no flow with id '${unknownId}'`)),
      });
      expect(jsonError(await local('flow', unknownId, '--json')).code).toBe('not_found');
      const bad = await local('flow', 'not-a-uuid', '--json');
      expect(bad.code).toBe(2);
      expect(jsonError(bad)).toEqual({
        code: 'invalid_input',
        message: expect.stringContaining('flowId'),
      });
      expect((await local('flow')).code).toBe(2);
    });

    it("cancel-flow: asks for --yes without a terminal; cancels the flow's unfinished jobs, leaves its finished one", async () => {
      const { flowId, ids } = await flowOf('etl');
      const unconfirmed = await run('cancel-flow', flowId);
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(
        /^error: Cancel the 2 unfinished job\(s\) of flow [-0-9a-f]+: pass --yes to confirm \(no terminal to ask on\)\nusage: nest-pg-job-queue cancel-flow <flowId>/,
      );
      expect(await statusesOf(ids)).toEqual(['completed', 'pending', 'blocked']);

      const cancelled = await runJson('cancel-flow', flowId, '--yes');
      expect(cancelled.code).toBe(0);
      const result = parsed<{ flowId: string; cancelled: Array<{ id: string; status: string }> }>(
        cancelled,
      );
      expect(result.flowId).toBe(flowId);
      expect(result.cancelled.map((job) => [job.id, job.status]).sort()).toEqual([
        [ids[1], 'cancelled'],
        [ids[2], 'cancelled'],
      ]);
      expect(await statusesOf(ids)).toEqual(['completed', 'cancelled', 'cancelled']);

      // Nothing left to cancel: nothing to ask either.
      const again = await local('cancel-flow', flowId);
      expect(again).toMatchObject({
        code: 0,
        stdout: `0 unfinished job(s) of flow ${flowId} cancelled\n`,
      });
      const unknown = await local('cancel-flow', '7d1f0c7e-2b4a-4c39-8f0e-5a6b7c8d9e0f', '--yes');
      expect(unknown.code).toBe(1);
      const bad = await local('cancel-flow', 'nope', '--yes', '--json');
      expect(bad.code).toBe(2);
      expect(jsonError(bad).code).toBe('invalid_input');
      const other = await flowOf('etl');
      const human = await local('cancel-flow', other.flowId, '-y');
      expect(human).toMatchObject({
        code: 0,
        stdout: `2 unfinished job(s) of flow ${other.flowId} cancelled\n`,
      });
    });

    it('redrive: asks for --yes without a terminal, then moves failed jobs and counts them', async () => {
      const failed = [await jobIn('mail', 'failed'), await jobIn('mail', 'failed')];
      const other = await jobIn('sms', 'failed');
      const old = await jobIn('mail', 'failed');
      await sql.query(
        `UPDATE job_queue.jobs SET completed_at = now() - interval '3 days' WHERE id = $1`,
        [old],
      );

      const unconfirmed = await run('redrive', '--type', 'mail');
      expect(unconfirmed.code).toBe(2);
      expect(unconfirmed.stderr).toMatch(
        /pass --yes to confirm \(no terminal to ask on\)\nusage: nest-pg-job-queue redrive/,
      );
      expect(await statusOf(failed[0])).toBe('failed');

      const moved = await runJson('redrive', '--type', 'mail', '--since', '1d', '--yes');
      expect(moved.code).toBe(0);
      expect(parsed(moved)).toEqual({ redriven: 2, skipped: { uniqueKey: 0, locked: 0 } });
      expect(await statusesOf([...failed, other, old])).toEqual([
        'pending',
        'pending',
        'failed',
        'failed',
      ]);

      const byId = await run('redrive', '--id', old, '--id', other, '-y');
      expect(byId).toMatchObject({ code: 0, stdout: '2 failed job(s) back to pending\n' });

      expect((await local('redrive', '--since', 'last week', '--yes')).code).toBe(2);
      const badId = await local('redrive', '--id', 'x', '--yes', '--json');
      expect(badId.code).toBe(2);
      expect(jsonError(badId).message).toContain('ids[0]');
    });

    it('prune: deletes finished jobs it is told to and counts them', async () => {
      const done = await jobIn('mail', 'completed');
      const failed = await jobIn('mail', 'failed');
      const pending = await jobIn('mail', 'pending');
      expect((await run('prune', '--older-than', '0s')).code).toBe(2);
      const pruned = await runJson('prune', '--older-than', '0s', '--status', 'completed', '--yes');
      expect(parsed(pruned)).toEqual({ pruned: 1, kept: { dependants: 0 } });
      const { rows } = await sql.query<{ id: string }>(
        `SELECT id::text FROM job_queue.jobs ORDER BY id`,
      );
      expect(rows.map((row) => row.id)).toEqual([failed, pending]);
      expect(done).toBeDefined();

      const notFinished = await local('prune', '--status', 'pending', '--yes', '--json');
      expect(notFinished.code).toBe(2);
      expect(jsonError(notFinished).message).toContain('statuses[0]');
      const future = await local('prune', '--older-than', '2999-01-01', '--yes');
      expect(future.code).toBe(2);
      expect(future.stderr).toContain('--older-than: 2999-01-01 is in the future');

      // The failed job is kept while the blocked job depends on it, and the report says so.
      const waiting = await blockedJob('merge');
      await sql.query(
        `INSERT INTO job_queue.job_dependencies (job_id, dependency_id) VALUES ($1, $2)`,
        [waiting, failed],
      );
      await sql.query(`UPDATE job_queue.jobs SET has_dependants = true WHERE id = $1`, [failed]);
      expect(await run('prune', '--older-than', '0s', '--yes')).toMatchObject({
        code: 0,
        stdout: '0 finished job(s) deleted; 1 kept: unfinished jobs depend on them\n',
      });
    });

    it('pause, resume and stats', async () => {
      await jobIn('mail', 'pending');
      await jobIn('mail', 'failed');
      await blockedJob('mail');
      expect(parsed(await runJson('pause', 'mail'))).toEqual({ type: 'mail', paused: true });
      const stats = parsed<{ types: Record<string, Record<string, unknown>> }>(
        await runJson('stats', '--fresh'),
      );
      expect(stats.types.mail).toMatchObject({
        pending: 1,
        blocked: 1,
        failed: 1,
        completed: 0,
        paused: true,
      });
      const human = await local('stats', '--fresh');
      expect(human.stdout).toMatch(
        /^TYPE\s+SCHEDULED\s+PENDING\s+WAITING\s+BLOCKED\s+CLAIMED.*PAUSED\nmail\s+0\s+1\s+0\s+1\s+0\s.*paused\n$/,
      );
      expect(parsed(await runJson('resume', 'mail'))).toEqual({ type: 'mail', paused: false });
      expect((await local('pause', ' '.repeat(3))).code).toBe(2);
    });

    it("schedules and run-schedule: the schedules, a schedule's job now, an unknown name exits 1", async () => {
      await sql.query(
        `INSERT INTO job_queue.job_schedules (name, cron, timezone, catch_up, job_type, data,
                                              priority, max_attempts, source, next_fire_at)
         VALUES ('nightly', '0 6 * * *', 'UTC', 'once', 'report', '{"n":1}', 100, NULL,
                 'schedule', now() + interval '1 day')`,
      );
      const listed = parsed<{ schedules: Array<Record<string, unknown>> }>(
        await runJson('schedules'),
      );
      expect(listed.schedules).toEqual([
        expect.objectContaining({ name: 'nightly', cron: '0 6 * * *', jobType: 'report' }),
      ]);
      expect((await local('schedules')).stdout).toMatch(
        /^NAME\s+CRON.*\nnightly\s+0 6 \* \* \*\s+UTC\s+report/,
      );
      const ran = parsed<{ job: { jobType: string; data: unknown; status: string } }>(
        await runJson('run-schedule', 'nightly'),
      );
      expect(ran.job).toMatchObject({ jobType: 'report', data: { n: 1 }, status: 'pending' });
      const unknown = await run('run-schedule', 'weekly');
      expect(unknown).toMatchObject({
        code: 1,
        stderr: "error: no schedule named 'weekly' (`nest-pg-job-queue schedules` lists them)\n",
      });
      expect(jsonError(await local('run-schedule', 'weekly', '--json')).code).toBe(
        'schedule_not_found',
      );
    });

    it('takes the global options before the command as well as after it', async () => {
      for (const args of [
        ['--url', db.url, 'stats', '--json'],
        ['--json', '--schema', 'job_queue', 'stats'],
        [`--url=${db.url}`, '--json', 'stats'],
      ]) {
        const result = await local(...args);
        expect({ args, code: result.code }).toEqual({ args, code: 0 });
        expect(JSON.parse(result.stdout)).toEqual({ types: expect.any(Object) });
      }
      expect((await local('--url', db.url)).code).toBe(2);
    });

    it('bad usage: an unknown command or flag, a missing or extra argument exit 2 with a usage line', async () => {
      const cases: Array<[string[], RegExp]> = [
        [
          ['frobnicate'],
          /^error: unknown command "frobnicate" .*\nusage: nest-pg-job-queue <command>/,
        ],
        [['list', '--colour'], /^error: Unknown option '--colour'\nusage: nest-pg-job-queue list /],
        [['show'], /^error: missing <id>\nusage: nest-pg-job-queue show <id>\n$/],
        [
          ['retry', '1', '2'],
          /^error: unexpected argument "2"\nusage: nest-pg-job-queue retry <id>\n$/,
        ],
        [['enqueue', 'report'], /^error: missing <json>\n/],
        [['list', '--limit'], /^error: Option '--limit <value>' argument missing\n/],
      ];
      for (const [i, [args, stderr]] of cases.entries()) {
        // The first two from the tarball, the rest in this process.
        const result = i < 2 ? await run(...args) : await local(...args);
        expect({ args, code: result.code, stdout: result.stdout }).toEqual({
          args,
          code: 2,
          stdout: '',
        });
        expect(result.stderr).toMatch(stderr);
      }
      expect(jsonError(await local('frobnicate', '--json'))).toEqual({
        code: 'usage',
        message: expect.stringContaining('frobnicate'),
      });
      const none = await local();
      expect(none.code).toBe(2);
      const help = await local('--help');
      expect(help.code).toBe(0);
      // list names the statuses --status takes.
      expect(help.stdout).toMatch(/^ {2}list .*\(STATUS: scheduled, pending, waiting, blocked, /m);
      for (const command of [
        'migrate',
        'stats',
        'list',
        'show',
        'retry',
        'redrive',
        'cancel',
        'pause',
        'resume',
        'schedules',
        'run-schedule',
        'prune',
        'enqueue',
        'flow',
        'cancel-flow',
      ]) {
        expect(help.stdout).toMatch(new RegExp(`^  ${command}\\b`, 'm'));
      }
      const noUrl = await cli.run(['stats'], { DATABASE_URL: '' });
      expect(noUrl.code).toBe(2);
      expect(noUrl.stderr).toMatch(/^error: no database: set DATABASE_URL or pass --url/);
    });

    it('an unreachable database: one line naming where it tried, never the password, exit 1', async () => {
      const url = 'postgres://operator:s3cret-pw@127.0.0.1:1/queue';
      const human = await cli.run(['stats', '--url', url]);
      expect(human).toMatchObject({
        code: 1,
        stderr: 'error: cannot connect to PostgreSQL at 127.0.0.1:1/queue: connection refused\n',
      });
      const json = await cli.run(['retry', '1', '--url', url, '--json']);
      expect(json.code).toBe(1);
      expect(jsonError(json)).toEqual({
        code: 'unreachable',
        message: expect.stringContaining('127.0.0.1:1'),
      });
      const migrate = await local('migrate', '--url', url);
      expect(migrate.code).toBe(1);
      const verbose = await local('stats', '--url', url, '--verbose');
      expect(verbose.stderr.split('\n').length).toBeGreaterThan(3);
      for (const result of [human, json, migrate, verbose])
        expect(result.stderr).not.toContain('s3cret');
    });

    it('leaves no connection behind and exits promptly', async () => {
      await jobIn('mail', 'pending');
      for (const args of [
        ['show', '999999'],
        ['redrive', '--yes'],
      ]) {
        const result = await cli.npx(args, env());
        expect(result.ms).toBeLessThan(PROMPT_MS);
      }
      const { rows } = await sql.query<{ others: number }>(
        `SELECT count(*)::int AS others FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()`,
      );
      expect(rows[0].others).toBe(0);
    });
  });

  describe('on a terminal (in process, the streams faked)', () => {
    function terminal(answer?: string) {
      const stdin = Object.assign(new PassThrough(), { isTTY: true });
      const stdout = Object.assign(new PassThrough(), { isTTY: true });
      const stderr = Object.assign(new PassThrough(), { isTTY: true });
      const text = { stdout: '', stderr: '' };
      stdout.on('data', (chunk: Buffer) => (text.stdout += chunk.toString()));
      stderr.on('data', (chunk: Buffer) => {
        text.stderr += chunk.toString();
        if (answer !== undefined && !stdin.writableEnded && text.stderr.includes('[y/N]')) {
          stdin.end(`${answer}\n`);
        }
      });
      return { io: { stdin, stdout, stderr, env: { DATABASE_URL: db.url } }, text };
    }

    beforeEach(() => sql.query(`TRUNCATE job_queue.jobs, job_queue.job_events`));

    it('a bulk action asks first; "n" changes nothing and exits 1, "y" goes ahead', async () => {
      const failed = await jobIn('mail', 'failed');
      const declined = terminal('n');
      expect(await main(['redrive', '--type', 'mail'], declined.io)).toBe(1);
      expect(declined.text.stderr).toContain('Redrive failed jobs (type mail)? [y/N] ');
      expect(declined.text.stderr).toContain('not confirmed: nothing changed');
      expect(await statusOf(failed)).toBe('failed');

      const accepted = terminal('y');
      expect(await main(['redrive', '--type', 'mail'], accepted.io)).toBe(0);
      expect(accepted.text.stdout).toBe('1 failed job(s) back to pending\n');
      expect(await statusOf(failed)).toBe('pending');
    });

    it('cancel-flow asks first; "n" changes nothing and exits 1, "y" goes ahead', async () => {
      const { flowId, ids } = await flowOf('etl');
      const declined = terminal('n');
      expect(await main(['cancel-flow', flowId], declined.io)).toBe(1);
      expect(declined.text.stderr).toContain(
        `Cancel the 2 unfinished job(s) of flow ${flowId}? [y/N] `,
      );
      expect(await statusesOf(ids)).toEqual(['completed', 'pending', 'blocked']);
      const accepted = terminal('y');
      expect(await main(['cancel-flow', flowId], accepted.io)).toBe(0);
      expect(accepted.text.stdout).toBe(`2 unfinished job(s) of flow ${flowId} cancelled\n`);
      expect(await statusesOf(ids)).toEqual(['completed', 'cancelled', 'cancelled']);
    });

    it('colours statuses on a terminal, and not with NO_COLOR', async () => {
      await jobIn('mail', 'failed');
      await blockedJob('mail');
      const coloured = terminal();
      expect(await main(['list'], coloured.io)).toBe(0);
      expect(coloured.text.stdout).toContain('\x1b[31mfailed\x1b[0m');
      expect(coloured.text.stdout).toContain('\x1b[33mblocked\x1b[0m');
      const plain = terminal();
      plain.io.env = { ...plain.io.env, NO_COLOR: '1' } as typeof plain.io.env;
      expect(await main(['list'], plain.io)).toBe(0);
      expect(plain.text.stdout).not.toContain('\x1b');
    });

    it("escapes a job type's control characters instead of sending them to the terminal", async () => {
      await jobIn('evil\x1b[2Jtype', 'failed');
      const shown = terminal();
      expect(await main(['list', '--status', 'failed'], shown.io)).toBe(0);
      expect(shown.text.stdout).toContain('evil\\x1b[2Jtype');
      expect(shown.text.stdout).not.toContain('\x1b[2J');
    });

    it('escapes the type of a key holder that enqueue reports', async () => {
      const holder = await jobIn('evil\x1b]0;owned\x07type', 'pending');
      await sql.query(`UPDATE job_queue.jobs SET unique_key = 'k-evil' WHERE id = $1`, [holder]);
      const result = await local('enqueue', 'mail', '{}', '--unique-key', 'k-evil');
      expect(result.code).toBe(0);
      expect(result.stdout).toBe(`job ${holder} skipped (evil\\x1b]0;owned\\x07type, pending)\n`);
    });

    it('a bad %-escape in the URL, a negative --limit, a statement timeout in the URL', async () => {
      const badEscape = await local('stats', '--url', 'postgres://127.0.0.1/queue%zz');
      expect(badEscape.code).toBe(2);
      expect(badEscape.stderr.split('\n')[0]).toBe(
        'error: --url: the database name has a bad %-escape (write a literal % as %25, and ' +
          'other characters as their UTF-8 bytes, %C3%A9 for é)',
      );
      const negative = await local('list', '--limit', '-1');
      expect(negative.code).toBe(2);
      expect(negative.stderr.split('\n')[0]).toMatch(/^error: .*limit.*-1/);
      expect(negative.stderr).not.toContain('ambiguous');
      // The server cancelled a statement (a statement_timeout in the URL's options): its words,
      // not the connect timeout's (whether 1 ms cancels one here depends on the machine).
      const cancelled = connectionFailure(
        { url: 'postgres://127.0.0.1/queue?options=-c%20statement_timeout%3D1', schema: undefined },
        Object.assign(new Error('canceling statement due to statement timeout'), {
          code: '57014',
        }),
      );
      expect(cancelled.message).toBe(
        'cannot connect to PostgreSQL at 127.0.0.1:5432/queue: ' +
          'canceling statement due to statement timeout',
      );
    });
  });

  it("the README's CLI examples run as they are on a fresh database", async () => {
    const examples = readmeExamples();
    expect(examples.length).toBeGreaterThan(5);
    for (const line of examples) {
      const result = await cli.shell(line, { DATABASE_URL: readmeDb.url });
      expect({ line, code: result.code, stderr: result.stderr }).toEqual({
        line,
        code: 0,
        stderr: '',
      });
    }
  });
});
