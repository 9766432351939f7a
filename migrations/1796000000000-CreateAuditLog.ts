import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The example app's own table: the README's transactional-enqueue example writes an audit line
 * and enqueues a job in one transaction, so both exist or neither does.
 */
export class CreateAuditLog1796000000000 implements MigrationInterface {
  name = 'CreateAuditLog1796000000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE audit_log (
        id bigserial PRIMARY KEY,
        message text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )
    `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE audit_log`);
  }
}
