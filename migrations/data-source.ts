import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { exampleAppMigrations } from './index';

/** For `npm run migration:run` / `migration:revert`: the example app's migrations (the queue's and its own) on `DATABASE_URL`. */
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error(
    'Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/app) to run migrations.',
  );
}

export default new DataSource({ type: 'postgres', url, migrations: exampleAppMigrations });
