import { ExampleApp, startExampleApp } from '../support/example-app';
import { waitFor } from '../support/wait-for';

/**
 * The example's outgoing email, `POST /emails`: each tenant's emails run at most two at a time
 * (`concurrencyPerKey: 2`, the tenant as `concurrencyKey`), while other tenants' run beside
 * them. Overlaps are measured from each send's start and end as the handler records them.
 */
describe('example app: outgoing email, two at a time per tenant', () => {
  let example: ExampleApp;

  beforeAll(async () => {
    example = await startExampleApp({ WORKER_CONCURRENCY: 8, EMAIL_SEND_MS: 150 });
  });

  afterAll(async () => {
    await example?.close();
  });

  const send = async (tenantId: string, n: number): Promise<string> =>
    (
      await example
        .http()
        .post('/emails')
        .send({ tenantId, to: `user${n}@${tenantId}.test`, subject: `Invoice ${n}` })
        .expect(201)
    ).body.id;

  it('a tenant with a backlog runs two at a time; a quiet tenant is not held back by it', async () => {
    const busy: string[] = [];
    for (let n = 0; n < 10; n++) busy.push(await send('busy', n));
    const quiet = await send('quiet', 0);
    const all = [...busy, quiet];
    await waitFor(
      async () => {
        const { rows } = await example.sql.query(
          `SELECT count(*)::int AS n FROM job_queue.jobs
           WHERE id = ANY($1::bigint[]) AND status = 'completed'`,
          [all],
        );
        return rows[0].n === all.length;
      },
      { description: 'every email to be sent', timeoutMs: 30_000 },
    );

    // The most of a tenant's emails being sent at once: at each one's start, those started and
    // not sent, by the handler's own record of both (`started_at` is the claim's transaction
    // start, which a claim waiting for a concurrent enqueue's lock dates before it counted).
    const { rows: overlaps } = await example.sql.query(
      `WITH sent AS (
         SELECT concurrency_key AS tenant, (result->>'startedAt')::timestamptz AS began,
                (result->>'sentAt')::timestamptz AS ended
         FROM job_queue.jobs WHERE id = ANY($1::bigint[]))
       SELECT j.tenant, max(o.n)::int AS most
       FROM sent j CROSS JOIN LATERAL (
         SELECT count(*) AS n FROM sent x
         WHERE x.tenant = j.tenant AND x.began <= j.began AND x.ended > j.began) AS o
       GROUP BY 1 ORDER BY 1`,
      [all],
    );
    expect(overlaps).toEqual([
      { tenant: 'busy', most: 2 },
      { tenant: 'quiet', most: 1 },
    ]);
    // The quiet tenant's email went out while the busy one's backlog was still being sent.
    const { rows: order } = await example.sql.query(
      `SELECT (SELECT completed_at FROM job_queue.jobs WHERE id = $2)
              < max(completed_at) AS quiet_first
       FROM job_queue.jobs WHERE id = ANY($1::bigint[])`,
      [busy, quiet],
    );
    expect(order[0].quiet_first).toBe(true);
    const { body: job } = await example.http().get(`/jobs/${quiet}`).expect(200);
    expect(job).toMatchObject({ type: 'email.send', status: 'completed' });
  });

  it('refuses a bad tenant id with a 400 naming the field', async () => {
    const { body } = await example
      .http()
      .post('/emails')
      .send({ tenantId: 'Not A Tenant', to: 'a@b.test', subject: 'x' })
      .expect(400);
    expect(body).toMatchObject({ field: 'tenantId' });
  });
});
