import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import {
  InvalidJobInputError,
  JobNotFoundError,
  JobQueueDatabaseError,
  JobQueueUnavailableError,
  JobStateConflictError,
  ScheduleNotFoundError,
} from '../errors';
import { schemaOption } from '../options/schema.option';
import { CliError, EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError } from './cli.errors';
import { BIN, helpText, usageOf } from './cli.messages';
import { Command, CommandContext, CommandOptions, OptionValues, stringOption } from './command';
import { describeTarget, notMigrated, openQueue, resolveTarget, Target } from './connection';
import { Output } from './output';
import { CliIo, plain } from './terminal';
import { migrateCommand } from './commands/migrate.command';
import { statsCommand } from './commands/stats.command';
import {
  cancelCommand,
  enqueueCommand,
  listCommand,
  retryCommand,
  showCommand,
} from './commands/jobs.commands';
import { pruneCommand, redriveCommand } from './commands/bulk.commands';
import { cancelFlowCommand, flowCommand } from './commands/flow.commands';
import { pauseTypeCommand, resumeTypeCommand } from './commands/types.commands';
import { runScheduleCommand, schedulesCommand } from './commands/schedules.commands';

export const COMMANDS: Command[] = [
  migrateCommand,
  statsCommand,
  listCommand,
  showCommand,
  retryCommand,
  redriveCommand,
  cancelCommand,
  flowCommand,
  cancelFlowCommand,
  pauseTypeCommand,
  resumeTypeCommand,
  schedulesCommand,
  runScheduleCommand,
  pruneCommand,
  enqueueCommand,
];

const GLOBAL_OPTIONS: CommandOptions = {
  url: { type: 'string' },
  schema: { type: 'string' },
  json: { type: 'boolean' },
  verbose: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};
const BULK_OPTIONS: CommandOptions = { yes: { type: 'boolean', short: 'y' } };
/** SQLSTATEs of a schema older than this package: a table, column or function is missing. */
const MISSING_OBJECT_CODES = new Set(['42P01', '42703', '42883', '3F000']);

/**
 * Runs one command line (`argv` without node and the script) and resolves with the exit code:
 * 0 done, 1 a failure, 2 bad usage. Everything it prints goes to `io`.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  const json = argv.includes('--json');
  const out = new Output(io, json);
  const verbose = argv.includes('--verbose');
  const [name, rest] = splitCommand(argv);
  if (name === undefined && argv.includes('--version')) {
    io.stdout.write(`${packageVersion()}\n`);
    return EXIT_OK;
  }
  const asksHelp =
    name === 'help' || (name === undefined && /^(--help|-h)$/m.test(argv.join('\n')));
  if (name === undefined || name === 'help') {
    (asksHelp ? io.stdout : io.stderr).write(`${helpText(COMMANDS)}\n`);
    return asksHelp ? EXIT_OK : EXIT_USAGE;
  }
  const command = COMMANDS.find((candidate) => candidate.name === name);
  try {
    if (!command) {
      throw new UsageError(
        `unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(', ')})`,
        `${BIN} <command> [arguments] [options]; ${BIN} --help`,
      );
    }
    const { args, options } = parseCommandLine(command, rest);
    if (options.help === true) {
      io.stdout.write(`usage: ${usageOf(command)}\n  ${command.summary}\n`);
      return EXIT_OK;
    }
    await command.run(commandContext(command, args, options, out, io));
    return EXIT_OK;
  } catch (thrown) {
    const error = toCliError(thrown, command);
    out.error(error, verbose ? stackOf(thrown) : undefined);
    return error.exitCode;
  }
}

/**
 * The command's name (the first word that is not an option or a global option's value) and the
 * rest of the line, so the global options may come before it too: `--url … stats`.
 */
function splitCommand(argv: string[]): [string | undefined, string[]] {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (!arg.startsWith('-')) return [arg, [...argv.slice(0, i), ...argv.slice(i + 1)]];
    const option = GLOBAL_OPTIONS[arg.replace(/^--/, '')];
    if (option?.type === 'string' && !arg.includes('=')) i++; // its value is the next word
  }
  return [undefined, argv];
}

/**
 * `--limit -1` as `--limit=-1`: parseArgs reads a value that starts with a dash as an option
 * and refuses it as ambiguous, so the option's own check never got to say what is wrong with -1.
 */
function withNegativeValues(argv: string[], known: Record<string, { type: string }>): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const name = /^--([^=]+)$/.exec(argv[i])?.[1];
    if (name && known[name]?.type === 'string' && /^-\d/.test(argv[i + 1] ?? '')) {
      out.push(`${argv[i]}=${argv[i + 1]}`);
      i++;
    } else out.push(argv[i]);
  }
  return out;
}

/** The command's arguments and options; a usage error for an unknown flag or a missing argument. */
function parseCommandLine(
  command: Command,
  argv: string[],
): { args: string[]; options: OptionValues } {
  const usage = usageOf(command);
  let parsed: ReturnType<typeof parseArgs>;
  const known = { ...GLOBAL_OPTIONS, ...(command.bulk ? BULK_OPTIONS : {}), ...command.options };
  try {
    parsed = parseArgs({
      args: withNegativeValues(argv, known),
      options: known,
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    // parseArgs' first sentence says it ("Unknown option '--nope'"); the rest is about `--`.
    throw new UsageError((error as Error).message.split(/\.\s|\n/)[0], usage);
  }
  const options = parsed.values as OptionValues;
  const wanted = command.args ?? [];
  if (options.help === true) return { args: [], options };
  if (parsed.positionals.length < wanted.length) {
    throw new UsageError(`missing <${wanted[parsed.positionals.length]}>`, usage);
  }
  if (parsed.positionals.length > wanted.length) {
    throw new UsageError(
      `unexpected argument "${plain(parsed.positionals[wanted.length])}"`,
      usage,
    );
  }
  return { args: parsed.positionals, options };
}

function commandContext(
  command: Command,
  args: string[],
  options: OptionValues,
  out: Output,
  io: CliIo,
): CommandContext {
  let target: Target | undefined;
  const resolve = (): Target =>
    (target ??= resolveTarget(
      stringOption(options, 'url'),
      stringOption(options, 'schema'),
      io.env,
    ));
  return {
    args,
    options,
    out,
    io,
    now: Date.now(),
    target: resolve,
    withQueue: async (fn) => {
      const where = resolve();
      const context = await openQueue(where);
      try {
        return await fn(context.queue);
      } catch (error) {
        throw toCliError(error, command, where);
      } finally {
        await context.close();
      }
    },
  };
}

/** Any failure as the one line the CLI prints, with its exit code. */
function toCliError(error: unknown, command: Command | undefined, target?: Target): CliError {
  if (error instanceof CliError) return error;
  return Object.assign(describeFailure(error, command, target), { cause: error });
}

function describeFailure(error: unknown, command: Command | undefined, target?: Target): CliError {
  const usage = command ? usageOf(command) : undefined;
  if (error instanceof InvalidJobInputError) {
    return new CliError('invalid_input', error.message, EXIT_USAGE, usage);
  }
  if (error instanceof JobNotFoundError) return new CliError('not_found', error.message);
  if (error instanceof ScheduleNotFoundError) {
    return new CliError(
      'schedule_not_found',
      `no schedule named '${error.scheduleName}' (\`${BIN} schedules\` lists them)`,
    );
  }
  if (error instanceof JobStateConflictError) return new CliError('state_conflict', error.message);
  if (error instanceof JobQueueUnavailableError) {
    const at = target ? ` at ${describeTarget(target.url)}` : '';
    return new CliError('unavailable', `the database${at} stopped answering: ${error.message}`);
  }
  if (error instanceof JobQueueDatabaseError && MISSING_OBJECT_CODES.has(error.code ?? '')) {
    return notMigrated(schemaOption(target?.schema));
  }
  const message = error instanceof Error ? error.message : String(error);
  return new CliError('failed', message || 'failed', EXIT_FAILURE);
}

/** `--verbose`: the stack of what went wrong underneath, else of the error itself. */
function stackOf(error: unknown): string | undefined {
  const cause = error instanceof Error ? error.cause : undefined;
  if (cause instanceof Error && cause.stack) return cause.stack;
  return error instanceof Error ? error.stack : undefined;
}

function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8'));
  return String(manifest.version);
}

/** The `bin`'s entry: runs `process.argv` and exits with its code, promptly. */
export function run(): void {
  void main(process.argv.slice(2), process).then((code) => {
    process.exitCode = code;
    // Everything is closed by now; should a socket linger, it must not keep an operator waiting.
    setTimeout(() => process.exit(code), 2_000).unref();
  });
}
