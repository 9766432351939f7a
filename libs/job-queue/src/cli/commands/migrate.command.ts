import { DataSource } from 'typeorm';
import { InvalidJobQueueOptionsError } from '../../errors';
import { jobQueueMigrationsFor } from '../../migrations';
import { UsageError } from '../cli.errors';
import { Command, stringOption } from '../command';
import { connectionFailure, dataSourceOptions } from '../connection';

/** TypeORM's own default, so that an app's `migration:run` reads the same table. */
const DEFAULT_MIGRATIONS_TABLE = 'migrations';

export const migrateCommand: Command = {
  name: 'migrate',
  usage: 'migrate [--migrations-table NAME]',
  summary: "runs the queue's pending migrations, recorded in TypeORM's migrations table",
  options: { 'migrations-table': { type: 'string' } },
  run: async ({ options, out, target }) => {
    const where = target();
    let migrations;
    try {
      migrations = jobQueueMigrationsFor({ schema: where.schema });
    } catch (error) {
      if (error instanceof InvalidJobQueueOptionsError) {
        throw new UsageError(`--schema: ${error.message}`);
      }
      throw error;
    }
    const dataSource = new DataSource({
      ...dataSourceOptions(where),
      migrations,
      migrationsTableName: stringOption(options, 'migrations-table') ?? DEFAULT_MIGRATIONS_TABLE,
    });
    try {
      await dataSource.initialize();
    } catch (error) {
      throw connectionFailure(where, error);
    }
    try {
      const applied = (await dataSource.runMigrations()).map((migration) => migration.name);
      out.result({ applied }, () =>
        applied.length === 0
          ? ['the queue is migrated: nothing to run']
          : [...applied.map((name) => `applied ${name}`), `${applied.length} migration(s) run`],
      );
    } finally {
      await dataSource.destroy();
    }
  },
};
