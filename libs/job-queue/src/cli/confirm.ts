import { createInterface } from 'node:readline';
import { CliError, UsageError } from './cli.errors';
import { CliIo, interactive } from './terminal';

/**
 * A bulk action goes ahead with `--yes`, or when the operator answers yes on a terminal. Without
 * a terminal to ask on and without `--yes` it is a usage error (exit 2); a refusal exits 1.
 */
export async function confirmBulk(
  io: CliIo,
  yes: boolean,
  question: string,
  usage: string,
): Promise<void> {
  if (yes) return;
  if (!interactive(io)) {
    throw new UsageError(`${question}: pass --yes to confirm (no terminal to ask on)`, usage);
  }
  const lines = createInterface({ input: io.stdin, output: io.stderr, terminal: false });
  const answer = await new Promise<string>((resolve) => {
    lines.once('line', resolve);
    lines.once('close', () => resolve(''));
    io.stderr.write(`${question}? [y/N] `);
  });
  lines.close();
  if (!/^y(es)?$/i.test(answer.trim()))
    throw new CliError('declined', 'not confirmed: nothing changed');
}

/**
 * Runs `work`, and while it runs longer than a second shows on a terminal's stderr how long it
 * has been at it (the line is cleared when done). Nothing without a terminal or with `--json`.
 */
export async function withProgress<T>(
  io: CliIo,
  quiet: boolean,
  label: string,
  work: Promise<T>,
): Promise<T> {
  if (quiet || !io.stderr.isTTY) return work;
  const started = Date.now();
  let shown = false;
  const timer = setInterval(() => {
    shown = true;
    io.stderr.write(`\r${label}… ${Math.round((Date.now() - started) / 1_000)} s`);
  }, 1_000);
  try {
    return await work;
  } finally {
    clearInterval(timer);
    if (shown) io.stderr.write('\r\x1b[2K');
  }
}
