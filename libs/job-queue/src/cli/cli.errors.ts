/** Exit codes: 0 done, 1 a failure, 2 bad usage. */
export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/**
 * An error the CLI reports as one line: `code` is what `--json` puts in `error.code`, `exitCode`
 * 1 or 2, and `usage` the usage line printed after a usage error.
 */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly exitCode: number = EXIT_FAILURE,
    readonly usage?: string,
  ) {
    super(message);
  }
}

/** Bad usage: an unknown command or flag, a missing argument, a bad value. Exit 2. */
export class UsageError extends CliError {
  constructor(message: string, usage?: string) {
    super('usage', message, EXIT_USAGE, usage);
  }
}
