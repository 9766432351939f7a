// The dashboard entry point from the tarball, served over HTTP by the app's platform
// (@nestjs/platform-express 11 or 12): compat/run.sh copies this file into the apps that
// install the optional peers and platform-express; main.ts imports it after the README's app
// ran. It mounts the README's QueueDashboardModule (its AdminGuard wants `x-admin: yes`): with
// the header the overview answers, under the dashboard's policy; without it, 403.
import assert from 'node:assert/strict';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { JobQueueModule } from 'nest-pg-job-queue';
import { QueueDashboardModule } from './dashboard.module.js';

/** Boots an HTTP app with the README's dashboard on `url` (a migrated database) and calls it. */
export async function runDashboard(url: string, app: string): Promise<void> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, retryAttempts: 0 }),
      JobQueueModule.forRoot({ worker: false }),
      QueueDashboardModule,
    ],
  })
  class DashboardAppModule {}

  const http = await NestFactory.create(DashboardAppModule, { logger: ['error'] });
  try {
    await http.listen(0, '127.0.0.1');
    const base = (await http.getUrl()).replace('[::1]', '127.0.0.1');
    const page = await fetch(`${base}/queue`, { headers: { 'x-admin': 'yes' } });
    assert.equal(page.status, 200, `${app}: GET /queue with the guard's header`);
    assert.match(await page.text(), /<table id="types">|No jobs yet/);
    assert.match(page.headers.get('content-security-policy') ?? '', /^default-src 'none'/);
    const refused = await fetch(`${base}/queue`);
    assert.equal(refused.status, 403, `${app}: GET /queue without the guard's header`);
  } finally {
    await http.close();
  }
  console.log(
    `PASS compat ${app}: nest-pg-job-queue/dashboard served by @nestjs/platform-express: the ` +
      "overview behind the README's guard, 403 without it",
  );
}
