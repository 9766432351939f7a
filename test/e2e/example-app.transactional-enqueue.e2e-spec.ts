import { CapturingLogger } from '../support/capturing-logger';
import { ExampleApp, startExampleApp } from '../support/example-app';

/**
 * `POST /images/audited` writes an audit_log line and enqueues the image's job in one transaction
 * (QueueService.enqueue(..., { manager })): both exist after a success, neither after a request
 * that fails once the job is enqueued. The failure is the database's own: a CHECK constraint on
 * audit_log refuses one uploader's line, after the enqueue has run inside the transaction.
 */
describe('example app: an audited upload enqueues in the same transaction as its audit line', () => {
  let example: ExampleApp;
  const logs = new CapturingLogger();

  beforeAll(async () => {
    example = await startExampleApp({ IMAGE_WORK_MS: 1 }, { logger: logs });
    await example.sql.query(
      `ALTER TABLE audit_log ADD CONSTRAINT audit_refuses_mallory CHECK (message NOT LIKE 'mallory %')`,
    );
  });

  afterAll(async () => {
    await example?.close();
  });

  const jobsNamed = async (name: string) =>
    (
      await example.sql.query<{ id: string }>(
        `SELECT id::text FROM job_queue.jobs WHERE data->>'name' = $1 ORDER BY id`,
        [name],
      )
    ).rows.map((row) => row.id);
  const auditLines = async (like: string) =>
    (
      await example.sql.query<{ message: string }>(
        `SELECT message FROM audit_log WHERE message LIKE $1 ORDER BY id`,
        [like],
      )
    ).rows.map((row) => row.message);
  /** The last id the jobs table's sequence handed out: it moves even for a rolled-back insert. */
  const lastJobId = async () =>
    BigInt(
      (
        await example.sql.query<{ last: string | null }>(
          `SELECT pg_sequence_last_value(pg_get_serial_sequence('job_queue.jobs', 'id'))::text AS last`,
        )
      ).rows[0].last ?? '0',
    );

  it('commits the job and the audit line together', async () => {
    const response = await example
      .anonymous()
      .post('/images/audited')
      .send({ name: 'audited-cat.png', uploadedBy: 'alice' })
      .expect(201);
    expect(response.body).toMatchObject({ type: 'image.process', priority: 200 });
    expect(await jobsNamed('audited-cat.png')).toEqual([response.body.id]);
    expect(await auditLines('alice %')).toEqual([
      `alice uploaded audited-cat.png (job ${response.body.id})`,
    ]);
  });

  it('leaves neither when the request fails after the enqueue', async () => {
    const before = await lastJobId();
    const response = await example
      .anonymous()
      .post('/images/audited')
      .send({ name: 'refused-cat.png', uploadedBy: 'mallory' })
      .expect(500);
    expect(response.body).toEqual({
      statusCode: 500,
      error: 'Internal Server Error',
      message: 'Internal server error',
    });
    // The job's row was inserted (its id was taken) and rolled back with the audit line.
    expect(await lastJobId()).toBeGreaterThan(before);
    expect(await jobsNamed('refused-cat.png')).toEqual([]);
    expect(await auditLines('mallory %')).toEqual([]);
  });

  it('validates its body like the other routes', async () => {
    const response = await example
      .anonymous()
      .post('/images/audited')
      .send({ name: 'cat.png' })
      .expect(400);
    expect(response.body).toEqual({
      statusCode: 400,
      error: 'Bad Request',
      message: 'uploadedBy must be a non-empty string of at most 100 characters (got undefined)',
      field: 'uploadedBy',
    });
  });
});
