import { DataSource } from 'typeorm';

/**
 * Undoes migrations, newest first, down to and including the one named `name`
 * (`SkipPausedJobTypesInClaim1795939200006`), so that a test of one migration's `down()` keeps
 * working when newer migrations are added after it.
 */
export async function undoMigrationsThrough(dataSource: DataSource, name: string): Promise<void> {
  const executed = (await dataSource.query(
    `SELECT name FROM migrations ORDER BY id DESC`,
  )) as Array<{ name: string }>;
  const index = executed.findIndex((migration) => migration.name === name);
  if (index < 0) throw new Error(`Migration ${name} has not run`);
  for (let i = 0; i <= index; i++) await dataSource.undoLastMigration();
}
