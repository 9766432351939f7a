import { MessageEvent } from '@nestjs/common';
import { QueueService } from 'nest-pg-job-queue';

/** How often a followed job's log is read for new lines while it runs. */
export const LOG_LINES_POLL_MS = 1_000;

const PAGE = 100;

/**
 * The new `ctx.log` lines of one job, as `log` messages: each read goes on from where the last
 * one ended. Lines are written with the job's progress and outcome writes, which a `progress`
 * event does not always accompany, so a follower reads them on a timer and once more at the end.
 * Reads never overlap: a read asked for while one runs waits for it.
 */
export class JobLogLines {
  private after: string | undefined;
  private reading: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly queue: QueueService,
    private readonly id: string,
  ) {}

  next(): Promise<MessageEvent[]> {
    const read = this.reading.then(() => this.readNew());
    this.reading = read.catch(() => undefined);
    return read;
  }

  private async readNew(): Promise<MessageEvent[]> {
    const messages: MessageEvent[] = [];
    for (;;) {
      const rows = await this.queue.jobEvents(this.id, { after: this.after, limit: PAGE });
      for (const row of rows) {
        this.after = row.id;
        if (row.kind !== 'log') continue;
        const { attempt, at, message, data } = row;
        messages.push({ type: 'log', data: { id: this.id, attempt, at, message, data } });
      }
      if (rows.length < PAGE) return messages;
    }
  }
}
