import { dashboardSuite } from '../support/dashboard-suite';

/** nest-pg-job-queue/dashboard on Express (Nest's default platform). */
describe('dashboard on Express', () => {
  dashboardSuite('express');
});
