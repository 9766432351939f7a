import { Logger } from 'typeorm';

/**
 * A TypeORM logger that records every statement a data source sends, for "one round trip"
 * assertions: pass it as `typeOrmOptions: { logger: counter }`, `reset()`, make the call, then
 * read `count` / `queries`. Only meaningful while nothing else (no worker) uses the data source.
 */
export class QueryCounter implements Logger {
  readonly queries: string[] = [];

  get count(): number {
    return this.queries.length;
  }

  reset(): void {
    this.queries.length = 0;
  }

  logQuery(query: string): void {
    this.queries.push(query);
  }

  logQueryError(): void {}
  logQuerySlow(): void {}
  logSchemaBuild(): void {}
  logMigration(): void {}
  log(): void {}
}
