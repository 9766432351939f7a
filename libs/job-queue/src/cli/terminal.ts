import { JobStatus } from '../entities/job-status.enum';

/** Where the CLI reads and writes: the process's own streams, or a test's. */
export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  env: NodeJS.ProcessEnv;
}

/** Colours only on a terminal, and never when NO_COLOR is set to anything (no-color.org). */
export function coloursOn(io: CliIo): boolean {
  return Boolean(io.stdout.isTTY) && !io.env.NO_COLOR;
}

/** Both ends are a terminal: someone can be asked. */
export function interactive(io: CliIo): boolean {
  return Boolean(io.stdin.isTTY) && Boolean(io.stdout.isTTY);
}

const SGR: Record<string, string> = {
  red: '31',
  green: '32',
  yellow: '33',
  cyan: '36',
  dim: '2',
  bold: '1',
};
/** Every status, so that a new one does not compile until it has its colour. */
const STATUS_COLOUR: Record<JobStatus, string> = {
  [JobStatus.Failed]: 'red',
  [JobStatus.Completed]: 'green',
  [JobStatus.Pending]: 'yellow',
  [JobStatus.Scheduled]: 'yellow',
  [JobStatus.Waiting]: 'yellow',
  [JobStatus.Blocked]: 'yellow',
  [JobStatus.Claimed]: 'cyan',
  [JobStatus.Running]: 'cyan',
  [JobStatus.Cancelled]: 'dim',
};

export type Paint = (colour: string, text: string) => string;

export function painter(on: boolean): Paint {
  return (colour, text) => (on && SGR[colour] ? `\x1b[${SGR[colour]}m${text}\x1b[0m` : text);
}

/** A status' colour; none for a value that is no status (a row written by hand). */
export function statusColour(status: string): string {
  return STATUS_COLOUR[status as JobStatus] ?? '';
}

/**
 * A value as one line of terminal text: control characters (escape sequences, newlines) of job
 * types, errors and log lines shown as `\x1b`, `\n` …, never sent to the terminal as they are;
 * cut at `max` characters.
 */
export function plain(value: unknown, max = Infinity): string {
  let text =
    value === null || value === undefined
      ? '-'
      : value instanceof Date
        ? value.toISOString()
        : typeof value === 'string'
          ? value
          : JSON.stringify(value);
  // eslint-disable-next-line no-control-regex
  text = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) =>
    c === '\n' ? '\\n' : c === '\t' ? '\\t' : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
