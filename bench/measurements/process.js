'use strict';
// Processing N pre-enqueued no-op jobs with 1, 2 and 4 worker processes.
const { runProcessing } = require('../lib/processing');

const processing = (workers) => ({
  name: `process${workers}`,
  title: (cfg) =>
    `Process ${cfg.processJobs.toLocaleString('en')} pre-enqueued no-op jobs, ${workers} worker process${workers > 1 ? 'es' : ''}`,
  metrics: ['jobs/s'],
  extras: ['xacts/job', 'rows written/job', 'worker CPU µs/job', 'pg CPU µs/job'],
  async run({ peer, cfg }) {
    const { metrics, extra } = await runProcessing({
      peer,
      cfg,
      workers,
      total: cfg.processJobs,
      tag: `p${workers}`,
    });
    return { ...metrics, extra };
  },
});

module.exports = [processing(1), processing(2), processing(4)];
