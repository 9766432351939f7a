import { dashboardSuite } from '../support/dashboard-suite';

/** nest-pg-job-queue/dashboard on Fastify (@nestjs/platform-fastify). */
describe('dashboard on Fastify', () => {
  dashboardSuite('fastify');
});
