import { ParseArgsConfig } from 'node:util';
import { QueueService } from '../queue.service';
import { Output } from './output';
import { CliIo } from './terminal';
import { Target } from './connection';

export type CommandOptions = NonNullable<ParseArgsConfig['options']>;
export type OptionValues = Record<string, string | boolean | string[] | boolean[] | undefined>;

/** What a command gets: its checked arguments, where to print, and the queue. */
export interface CommandContext {
  /** The command's positional arguments, as many as it names. */
  args: string[];
  /** Its options (and the global ones) as `parseArgs` read them. */
  options: OptionValues;
  out: Output;
  io: CliIo;
  /** This run's clock (ms), for durations. */
  now: number;
  /** The database and schema (`--url`/DATABASE_URL, `--schema`). */
  target(): Target;
  /** Boots the queue, runs `fn` with its `QueueService`, closes it whatever happens. */
  withQueue<T>(fn: (queue: QueueService) => Promise<T>): Promise<T>;
}

/** One command of the CLI. */
export interface Command {
  name: string;
  /** Its arguments and options, after the command's name, for the usage line. */
  usage: string;
  summary: string;
  /** The names of its positional arguments, all required. */
  args?: string[];
  options?: CommandOptions;
  /** Asks before it runs unless `--yes` (see `confirmBulk`). */
  bulk?: boolean;
  run(ctx: CommandContext): Promise<void>;
}

/** `--flag` as a string option's value, if given (a repeated flag's last value). */
export function stringOption(options: OptionValues, name: string): string | undefined {
  const value = options[name];
  if (Array.isArray(value)) return value.length ? String(value[value.length - 1]) : undefined;
  return typeof value === 'string' ? value : undefined;
}

/** A repeatable string option's values (`--status failed --status cancelled`). */
export function listOption(options: OptionValues, name: string): string[] | undefined {
  const value = options[name];
  if (value === undefined) return undefined;
  return (Array.isArray(value) ? value : [value]).map(String);
}

/**
 * A number from the command line, as `QueueService` gets it: an integer's text becomes the
 * number, anything else goes as given, so the service refuses it naming the field.
 */
export function numeric(text: string | undefined): number | string | undefined {
  if (text === undefined) return undefined;
  return /^-?\d{1,15}$/.test(text) ? Number(text) : text;
}
