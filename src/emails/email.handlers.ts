import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, JobContext, JobHandler } from 'nest-pg-job-queue';
import {
  EMAILS_PER_TENANT,
  EMAILS_PER_TENANT_PER_MINUTE,
  OUTGOING_EMAIL_JOB,
  OutgoingEmail,
  SentEmail,
} from './emails.constants';

/**
 * Sends outgoing email, at most `EMAILS_PER_TENANT` per tenant at once across every instance (the
 * job's `concurrencyKey` is its tenant), so one tenant's newsletter never fills every slot while
 * another tenant's password reset waits; and at most `EMAILS_PER_TENANT_PER_MINUTE` of a tenant's
 * in any minute, its provider's quota, so a burst waits its turn instead of bouncing.
 */
@Injectable()
export class EmailHandlers {
  @JobHandler(OUTGOING_EMAIL_JOB, {
    concurrencyPerKey: EMAILS_PER_TENANT,
    rateLimit: { max: EMAILS_PER_TENANT_PER_MINUTE, perMs: 60_000, byKey: true },
    maxAttempts: 5,
    timeoutMs: 60_000,
  })
  async send(job: Job<OutgoingEmail>, ctx: JobContext): Promise<SentEmail> {
    const startedAt = new Date().toISOString();
    // Stands in for the SMTP conversation with the tenant's server.
    await sleep(Number(process.env.EMAIL_SEND_MS ?? 200), undefined, { signal: ctx.signal });
    return { to: job.data.to, startedAt, sentAt: new Date().toISOString() };
  }
}
