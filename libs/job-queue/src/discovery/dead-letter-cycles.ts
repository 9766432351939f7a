import { optionValidator as check } from '../validation/option.validator';
import { RegisteredJobHandler } from './job-handler.registry';

/**
 * Refuses dead letters that lead back to where they started among this node's handlers
 * (`a` → `b` → `a`): a copy that fails for good would be copied back, its data nesting the last
 * one's, for as long as the handlers fail. The error names the handler whose option closes the
 * cycle, and the cycle. A type another node handles is not seen here.
 */
export function checkDeadLetterCycles(handlers: readonly RegisteredJobHandler[]): void {
  const byType = new Map(handlers.map((handler) => [handler.jobType, handler]));
  for (const start of handlers) {
    const path = [start.jobType];
    let handler: RegisteredJobHandler | undefined = start;
    while (handler?.options.deadLetter) {
      const next: string = handler.options.deadLetter;
      if (next === start.jobType) {
        check.fail(
          `@JobHandler('${handler.jobType}') on ${handler.name}: deadLetter`,
          next,
          `a type whose dead letters do not lead back to it (${[...path, next].join(' → ')})`,
        );
      }
      if (path.includes(next)) break; // a cycle that does not pass through `start`
      path.push(next);
      handler = byType.get(next);
    }
  }
}
