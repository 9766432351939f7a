import { Body, Controller, Post } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';
import { JobResponse, toJobResponse } from '../jobs/job.response';
import { SendEmailDto } from './dto/send-email.dto';
import { OUTGOING_EMAIL_JOB, OutgoingEmail } from './emails.constants';

@Controller('emails')
export class EmailsController {
  constructor(private readonly queue: QueueService) {}

  /** One email job, keyed by its tenant: the tenant's slots, not the queue's, limit it. */
  @Post()
  async send(@Body() { tenantId, to, subject }: SendEmailDto): Promise<JobResponse> {
    const job = await this.queue.enqueue<OutgoingEmail>(
      OUTGOING_EMAIL_JOB,
      { tenantId, to, subject },
      { concurrencyKey: tenantId },
    );
    return toJobResponse(job);
  }
}
