import { inspect } from 'node:util';
import { ConsoleLogger } from '@nestjs/common';

/**
 * What Nest prints for an error: its `ExceptionsHandler` hands the error object itself to
 * ConsoleLogger (which inspects its properties and `cause`), and apps often log message + stack.
 */
export function nestLogged(error: unknown): string {
  const written: string[] = [];
  const capture = (chunk: string | Uint8Array): boolean => {
    written.push(String(chunk));
    return true;
  };
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(capture);
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(capture);
  try {
    const logger = new ConsoleLogger('ExceptionsHandler', { colors: false });
    logger.error(error);
    logger.error((error as Error).message, (error as Error).stack);
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return written.join('');
}

/**
 * `secret` (put in a job's `data`) shows nowhere in `error`: not in its message or stack, in no
 * property or `cause` however deep, and not in what Nest logs of it.
 */
export function expectNoPayload(error: unknown, secret: string): void {
  const everything = inspect(error, {
    depth: Infinity,
    showHidden: true,
    maxArrayLength: Infinity,
    maxStringLength: Infinity,
  });
  expect((error as Error).message).not.toContain(secret);
  expect(String((error as Error).stack)).not.toContain(secret);
  expect(everything).not.toContain(secret);
  expect(nestLogged(error)).not.toContain(secret);
}

/** The error `call` rejects with; fails the test when it resolves. */
export async function rejection(call: () => Promise<unknown>): Promise<unknown> {
  const error = await call().then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (error === undefined) throw new Error('expected the call to reject, it resolved');
  return error;
}
