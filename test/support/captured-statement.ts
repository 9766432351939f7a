import { Queryable } from '../../libs/job-queue/src/sql/queryable';

/**
 * The statement and parameters `call` sends through the `Queryable` it is given, captured
 * without running it (the last one, if it sends several), so that a plan test EXPLAINs exactly
 * the library's text. `answer` is what the capture returns, the rows `call` then reads.
 */
export async function capturedStatement(
  call: (db: Queryable) => Promise<unknown>,
  answer: unknown[] = [],
): Promise<[string, unknown[]]> {
  let sent: [string, unknown[]] | undefined;
  await call({
    query: async (sql, params = []) => {
      sent = [sql, params];
      return answer;
    },
  });
  if (!sent) throw new Error('The call sent no statement');
  return sent;
}
