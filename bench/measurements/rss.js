'use strict';
// Resident memory of one worker process of our library as it runs many jobs.
const { runProcessing } = require('../lib/processing');

const MB = 1024 * 1024;

module.exports = {
  name: 'rss',
  title: (cfg) =>
    `Worker RSS (MB), one process: at boot, after ${cfg.rssAt.map((n) => n.toLocaleString('en')).join(' and after ')} jobs`,
  metrics: null, // set from cfg in main
  only: ['ours'],
  async run({ peer, cfg }) {
    const total = Math.max(...cfg.rssAt);
    const { metrics, extra } = await runProcessing({
      peer,
      cfg,
      workers: 1,
      total,
      rssAt: cfg.rssAt,
      tag: 'rss',
    });
    const result = { 'boot MB': extra.readyRss[0] / MB };
    for (const at of cfg.rssAt) result[`${at / 1000}k MB`] = extra.rssAt[0][at] / MB;
    result.extra = { 'jobs/s': metrics['jobs/s'], ...extra };
    return result;
  },
};
