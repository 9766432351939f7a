import { Injectable } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Job, JobContext, JobHandler } from 'nest-pg-job-queue';
import {
  EMAILS_PER_TENANT,
  OUTGOING_EMAIL_JOB,
  OutgoingEmail,
  SentEmail,
} from './emails.constants';

/**
 * Sends outgoing email, at most `EMAILS_PER_TENANT` per tenant at once across every instance (the
 * job's `concurrencyKey` is its tenant), so one tenant's newsletter never fills every slot while
 * another tenant's password reset waits.
 */
@Injectable()
export class EmailHandlers {
  @JobHandler(OUTGOING_EMAIL_JOB, {
    concurrencyPerKey: EMAILS_PER_TENANT,
    maxAttempts: 5,
    timeoutMs: 60_000,
  })
  async send(job: Job<OutgoingEmail>, ctx: JobContext): Promise<SentEmail> {
    // Stands in for the SMTP conversation with the tenant's server.
    await sleep(Number(process.env.EMAIL_SEND_MS ?? 200), undefined, { signal: ctx.signal });
    return { to: job.data.to, sentAt: new Date().toISOString() };
  }
}
