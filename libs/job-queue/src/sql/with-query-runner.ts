import { DataSource, QueryRunner } from 'typeorm';

/** Runs `fn` on one pooled connection and always gives the connection back. */
export async function withQueryRunner<T>(
  dataSource: DataSource,
  fn: (queryRunner: QueryRunner) => Promise<T>,
): Promise<T> {
  const queryRunner = dataSource.createQueryRunner();
  try {
    return await fn(queryRunner);
  } finally {
    await queryRunner.release();
  }
}
