import { Job } from '../entities/job.entity';
import { JobLogEntry } from '../interfaces/job-log-entry.interface';
import { Cell, Output } from './output';
import { plain, statusColour } from './terminal';

export function statusCell(status: string): { text: string; colour: string } {
  return { text: plain(status), colour: statusColour(status) };
}

/** Attempts as `1/3` (`1/-` without a limit of its own). */
function attempts(job: Job): string {
  return `${job.attempts}/${job.maxAttempts ?? '-'}`;
}

/** One line per job: id, type, status, priority, attempts, when it runs, its last error. */
export function jobTable(out: Output, jobs: Job[]): string[] {
  if (jobs.length === 0) return ['no jobs'];
  return out.table(
    ['ID', 'TYPE', 'STATUS', 'PRIORITY', 'ATTEMPTS', 'RUN AT', 'LAST ERROR'],
    jobs.map((job) => [
      job.id,
      plain(job.jobType, 40),
      statusCell(job.status),
      String(job.priority),
      attempts(job),
      plain(job.runAt),
      plain(job.lastError, 50),
    ]),
  );
}

/** A flow's jobs, one a line: id, step, type, status, attempts, unfinished dependencies, finished. */
export function flowTable(out: Output, jobs: Job[]): string[] {
  return out.table(
    ['ID', 'STEP', 'TYPE', 'STATUS', 'ATTEMPTS', 'WAITING ON', 'FINISHED'],
    jobs.map((job) => [
      job.id,
      plain(job.stepName, 40),
      plain(job.jobType, 40),
      statusCell(job.status),
      attempts(job),
      job.onDependencyFailure === null ? '-' : String(job.unfinishedDependencies),
      plain(job.completedAt),
    ]),
  );
}

/** A job, one property a line. */
export function jobDetail(out: Output, job: Job): string[] {
  const rows: Array<[string, Cell]> = [
    ['id', job.id],
    ['type', plain(job.jobType)],
    ['status', statusCell(job.status)],
    ['priority', String(job.priority)],
    ['attempts', attempts(job)],
    ['progress', `${job.progress}%${job.currentStage ? ` (${plain(job.currentStage)})` : ''}`],
    ['created', plain(job.createdAt)],
    ['run at', plain(job.runAt)],
    ['started', plain(job.startedAt)],
    ['finished', plain(job.completedAt)],
    ['worker', plain(job.workerId)],
    ['unique key', plain(job.uniqueKey)],
    ['concurrency key', plain(job.concurrencyKey)],
    ['last error', plain(job.lastError, 200)],
    ['data', plain(job.data, 200)],
    ['result', plain(job.result, 200)],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return rows.map(([name, cell]) => {
    const value = typeof cell === 'string' ? cell : out.paint(cell.colour, cell.text);
    return `${out.paint('bold', name.padEnd(width))}  ${value}`;
  });
}

/** The job's log, oldest first. */
export function logTable(out: Output, entries: JobLogEntry[]): string[] {
  if (entries.length === 0) return ['no log entries'];
  return out.table(
    ['AT', 'ATTEMPT', 'KIND', 'MESSAGE'],
    entries.map((entry) => [
      plain(entry.at),
      String(entry.attempt),
      plain(entry.kind),
      plain(entry.message ?? (entry.data === null ? null : entry.data), 80),
    ]),
  );
}
