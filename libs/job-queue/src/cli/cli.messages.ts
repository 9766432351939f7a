import { Command } from './command';

export const BIN = 'nest-pg-job-queue';

/** `nest-pg-job-queue --help`: every command's usage line and what it does, the global flags. */
export function helpText(commands: Command[]): string {
  const width = Math.max(...commands.map((command) => command.usage.length));
  return [
    `usage: ${BIN} <command> [arguments] [options]`,
    '',
    'commands:',
    ...commands.map((command) => `  ${command.usage.padEnd(width)}  ${command.summary}`),
    '',
    'options:',
    '  --url URL       the database (default: DATABASE_URL)',
    "  --schema NAME   the queue's schema (default: job_queue)",
    '  --json          one JSON document on stdout; errors as {"error":{"code","message"}} on stderr',
    '  --yes, -y       bulk actions (redrive, prune, cancel-flow) go ahead without asking',
    '  --verbose       stacks with errors',
    '  --help, -h      this text; --version the package version',
    '',
    'exit codes: 0 done, 1 a failure (unknown id, refused state, database unreachable), 2 bad usage',
  ].join('\n');
}

export const usageOf = (command: Command): string => `${BIN} ${command.usage}`;
