import { jobQueueMigrations } from 'nest-pg-job-queue';
import { CreateAuditLog1796000000000 } from './1796000000000-CreateAuditLog';

/**
 * The example app's migrations, in the order they run: the job queue's (from the package), then
 * the app's own. A real app lists its migrations the same way.
 */
export const exampleAppMigrations = [...jobQueueMigrations, CreateAuditLog1796000000000];
