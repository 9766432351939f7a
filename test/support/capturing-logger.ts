import { LoggerService } from '@nestjs/common';

export interface LogLine {
  level: 'log' | 'error' | 'warn' | 'debug' | 'verbose' | 'fatal';
  context: string | undefined;
  message: string;
  at: number;
}

/**
 * A Nest logger that keeps every line in memory (`Test.createTestingModule(...).setLogger(it)`),
 * so a test can count and read what the library logged. With `echo`, lines are printed too.
 */
export class CapturingLogger implements LoggerService {
  readonly lines: LogLine[] = [];

  constructor(private readonly echo = false) {}

  log(message: unknown, context?: string): void {
    this.add('log', message, context);
  }
  error(message: unknown, ...rest: unknown[]): void {
    // Nest passes (message, stack?, context?): the context is the last string.
    this.add('error', message, rest.at(-1) as string | undefined);
  }
  warn(message: unknown, context?: string): void {
    this.add('warn', message, context);
  }
  debug(message: unknown, context?: string): void {
    this.add('debug', message, context);
  }
  verbose(message: unknown, context?: string): void {
    this.add('verbose', message, context);
  }
  fatal(message: unknown, context?: string): void {
    this.add('fatal', message, context);
  }

  /** Lines whose message matches `pattern`. */
  matching(pattern: RegExp): LogLine[] {
    return this.lines.filter((line) => pattern.test(line.message));
  }

  private add(level: LogLine['level'], message: unknown, context: string | undefined): void {
    const text = typeof message === 'string' ? message : String(message);
    this.lines.push({ level, context, message: text, at: Date.now() });
    if (this.echo) process.stdout.write(`[${level}] ${context ?? ''} ${text}\n`);
  }
}
