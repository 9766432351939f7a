import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { jobQueueMigrations } from './index';

/** For `npm run migration:run` / `migration:revert`: the queue's migrations on `DATABASE_URL`. */
const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error(
    'Set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/app) to run migrations.',
  );
}

export default new DataSource({ type: 'postgres', url, migrations: jobQueueMigrations });
