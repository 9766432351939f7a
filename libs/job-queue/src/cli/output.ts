import { CliError } from './cli.errors';
import { CliIo, coloursOn, Paint, painter } from './terminal';

/** A table cell: its text (already `plain`) and an optional colour. */
export type Cell = string | { text: string; colour: string };

/**
 * What a command prints: with `--json`, one JSON document on stdout (its documented shape) and
 * errors as `{"error":{"code","message"}}` on stderr; else human text, coloured on a terminal.
 */
export class Output {
  readonly paint: Paint;

  constructor(
    private readonly io: CliIo,
    readonly json: boolean,
  ) {
    this.paint = painter(!json && coloursOn(io));
  }

  /** The command's result: `value` as JSON, or the human `lines`. */
  result(value: unknown, lines: () => string[]): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(value)}\n`);
    else for (const line of lines()) this.io.stdout.write(`${line}\n`);
  }

  /** One line of human chatter on stderr (confirmations, progress); nothing with `--json`. */
  note(line: string): void {
    if (!this.json) this.io.stderr.write(`${line}\n`);
  }

  /** The failure, as one line (and the usage line, the stack with `--verbose`). */
  error(error: CliError, stack: string | undefined): void {
    if (this.json) {
      this.io.stderr.write(
        `${JSON.stringify({ error: { code: error.code, message: error.message } })}\n`,
      );
    } else {
      this.io.stderr.write(`${this.paint('red', 'error:')} ${error.message}\n`);
      if (error.usage) this.io.stderr.write(`usage: ${error.usage}\n`);
    }
    if (stack) this.io.stderr.write(`${stack}\n`);
  }

  /** Rows under a header, columns padded to their widest cell. */
  table(header: string[], rows: Cell[][]): string[] {
    const text = (cell: Cell): string => (typeof cell === 'string' ? cell : cell.text);
    const widths = header.map((title, i) =>
      Math.max(title.length, ...rows.map((row) => text(row[i]).length)),
    );
    const line = (cells: Cell[], head = false): string =>
      cells
        .map((cell, i) => {
          const pad = ' '.repeat(widths[i] - text(cell).length);
          const shown = typeof cell === 'string' ? cell : this.paint(cell.colour, cell.text);
          return (head ? this.paint('bold', shown) : shown) + (i < cells.length - 1 ? pad : '');
        })
        .join('  ')
        .trimEnd();
    return [line(header, true), ...rows.map((row) => line(row))];
  }
}
