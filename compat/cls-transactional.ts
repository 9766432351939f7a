// Ambient enqueue from the tarball (compat/app.sh copies this file into the apps that install the
// optional peers, @nestjs-cls/transactional and its TypeORM adapter among them): the README's
// AuditedReports, whose @Transactional() method writes an audit line and enqueues a job; with a
// throw neither exists, without one both do. main.ts imports it after the README's app ran (its
// migration made audit_log).
import assert from 'node:assert/strict';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AuditedReports, AuditedReportsModule } from './cls-transactional.example.js';

/** Boots the README's module on `url` (a migrated database) and checks both outcomes. */
export async function runClsTransactional(url: string, app: string): Promise<void> {
  @Module({
    imports: [
      TypeOrmModule.forRoot({ type: 'postgres', url, retryAttempts: 0 }),
      AuditedReportsModule,
    ],
  })
  class ClsCompatModule {}

  const nest = await NestFactory.createApplicationContext(ClsCompatModule, { logger: ['error'] });
  try {
    const reports = nest.get(AuditedReports);
    const dataSource = nest.get(DataSource);
    const written = async (month: string): Promise<[number, number]> => {
      const [{ lines }] = await dataSource.query(
        `SELECT count(*)::int AS lines FROM audit_log WHERE message = $1`,
        [`ask ${month}`],
      );
      const [{ jobs }] = await dataSource.query(
        `SELECT count(*)::int AS jobs FROM job_queue.jobs WHERE data->>'month' = $1`,
        [month],
      );
      return [lines, jobs];
    };
    await assert.rejects(reports.request('2031-01', true), /rolled back/);
    assert.deepEqual(await written('2031-01'), [0, 0], 'a throw leaves neither line nor job');
    await reports.request('2031-02');
    assert.deepEqual(await written('2031-02'), [1, 1], 'a commit keeps both');
    console.log(
      `PASS compat ${app}: enqueue joined @nestjs-cls/transactional's transaction ` +
        '(thrown: neither the audit line nor the job; committed: both)',
    );
  } finally {
    await nest.close();
  }
}
