/** A start that cannot succeed as things are; its message is one line saying why and what to do. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}

/** The last line of a failed command's stderr (or the error's message): enough to say why. */
export function oneLine(error: unknown): string {
  const text =
    error instanceof Error ? ((error as { stderr?: unknown }).stderr ?? error.message) : error;
  return String(text).trim().split('\n').pop() ?? '';
}
