// Proves the compiled CommonJS library runs inside a NestJS 12 app (ESM-only packages) with plain
// `node`: enqueue one job, run it, shut down. Node >= 20.19 lets CommonJS require() ES modules.
// Run through `npm run compat:nest12` (it builds the library and copies it to ./build first).
'use strict';
require('reflect-metadata');
const assert = require('node:assert/strict');
const { Client } = require('pg');

const nestCore = require('@nestjs/core/package.json').version;
assert.match(nestCore, /^12\./, `expected NestJS 12 here, found ${nestCore}`);

const { NestFactory } = require('@nestjs/core');
const { Injectable, Module } = require('@nestjs/common');
const { TypeOrmModule } = require('@nestjs/typeorm');
const queue = require('./build/libs/job-queue/src');

const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) throw new Error('compat:nest12 needs DATABASE_URL (a PostgreSQL server it may create a database on)');

async function admin(sql) {
  const url = new URL(serverUrl);
  url.pathname = '/postgres';
  const client = new Client({ connectionString: url.toString() });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

class SmokeHandlers {
  async double(job, ctx) {
    await ctx.progress(50, 'doubling');
    return { doubled: job.data.n * 2 };
  }
}
// Decorators applied by hand: this file is plain JavaScript, as a user's compiled code would be.
Injectable()(SmokeHandlers);
queue.JobHandler('compat.double')(
  SmokeHandlers.prototype,
  'double',
  Object.getOwnPropertyDescriptor(SmokeHandlers.prototype, 'double'),
);

async function main() {
  const database = `jq_compat_nest12_${process.pid}`;
  await admin(`DROP DATABASE IF EXISTS ${database}`);
  await admin(`CREATE DATABASE ${database}`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  try {
    class AppModule {}
    Module({
      imports: [
        TypeOrmModule.forRoot({
          type: 'postgres',
          url: url.toString(),
          migrations: queue.jobQueueMigrations,
          migrationsRun: true,
        }),
        queue.JobQueueModule.forRoot({ worker: { concurrency: 2, pollIntervalMs: 200 } }),
      ],
      providers: [SmokeHandlers],
    })(AppModule);

    const app = await NestFactory.createApplicationContext(AppModule, { logger: ['error', 'warn'] });
    const queueService = app.get(queue.QueueService);
    const job = await queueService.enqueue('compat.double', { n: 21 });
    const deadline = Date.now() + 15_000;
    let current = await queueService.getJob(job.id);
    while (current.status !== queue.JobStatus.Completed) {
      assert.ok(Date.now() < deadline, `job still ${current.status} after 15 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      current = await queueService.getJob(job.id);
    }
    assert.deepEqual(current.result, { doubled: 42 });
    await app.close();
    console.log(`compat:nest12 ok: NestJS ${nestCore}, job ${job.id} completed with ${JSON.stringify(current.result)}`);
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
