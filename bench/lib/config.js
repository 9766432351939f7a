'use strict';
// Counts and limits of a full run and of --quick (a ~1 minute smoke for CI).

const FULL = {
  mode: 'full',
  reps: 3,
  warmupJobs: 50,
  enqueueJobs: 10_000,
  bulkJobs: 50_000,
  bulkChunk: 5_000,
  processJobs: 50_000,
  latencyJobs: 200,
  latencyGapMs: 20,
  latencyIdleMs: 1_000,
  cancelJobs: 100,
  delayedJobs: 200,
  delayedGapMs: 50,
  delayedFirstMs: 1_000,
  claimCalls: 100,
  claimRows: 1_000_000,
  listingRows: 10_000_000,
  listingCalls: 200,
  rssAt: [20_000, 200_000],
  runTimeoutMs: 300_000,
  bootTimeoutMs: 60_000,
  stopTimeoutMs: 30_000,
  analyze: true,
  peers: null, // all
};

const QUICK = {
  ...FULL,
  mode: 'quick',
  reps: 1,
  warmupJobs: 10,
  enqueueJobs: 300,
  bulkJobs: 5_000,
  bulkChunk: 1_000,
  processJobs: 3_000,
  latencyJobs: 25,
  latencyIdleMs: 300,
  cancelJobs: 20,
  delayedJobs: 40,
  claimCalls: 40,
  claimRows: 20_000,
  listingRows: 200_000,
  listingCalls: 50,
  rssAt: [1_000, 5_000],
  runTimeoutMs: 60_000,
  peers: ['ours', 'raw-sql-b500', 'graphile-batched', 'pg-boss-b5000', 'bullmq-pg', 'bullmq-redis'],
};

function parseArgs(argv) {
  const args = {
    quick: false,
    only: null,
    cases: null,
    reps: null,
    cpuProf: false,
    allocProf: false,
    list: false,
    out: null,
    baseline: null,
    soak: false,
    soakMinutes: 10,
    soakRate: 5_000,
    heldSnapshot: false,
    warmSeconds: 60,
    heldSeconds: 60,
    afterSeconds: 20,
    heldRate: 2_000,
  };
  for (const arg of argv) {
    if (arg === '--quick') args.quick = true;
    else if (arg === '--cpu-prof') args.cpuProf = true;
    else if (arg === '--alloc-prof') args.allocProf = true;
    else if (arg === '--list') args.list = true;
    else if (arg === '--soak') args.soak = true;
    else if (arg.startsWith('--soak-minutes=')) args.soakMinutes = Number(arg.slice(15));
    else if (arg.startsWith('--soak-rate=')) args.soakRate = Number(arg.slice(12));
    else if (arg === '--held-snapshot') args.heldSnapshot = true;
    else if (arg.startsWith('--warm-seconds=')) args.warmSeconds = Number(arg.slice(15));
    else if (arg.startsWith('--held-seconds=')) args.heldSeconds = Number(arg.slice(15));
    else if (arg.startsWith('--after-seconds=')) args.afterSeconds = Number(arg.slice(16));
    else if (arg.startsWith('--held-rate=')) args.heldRate = Number(arg.slice(12));
    else if (arg === '--no-analyze') args.noAnalyze = true;
    else if (arg.startsWith('--only='))
      args.only = arg
        .slice(7)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (arg.startsWith('--cases='))
      args.cases = arg
        .slice(8)
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    else if (arg.startsWith('--reps=')) args.reps = Number(arg.slice(7));
    else if (arg.startsWith('--out=')) args.out = arg.slice(6);
    else if (arg.startsWith('--baseline=')) args.baseline = arg.slice(11);
    else if (arg === '--help' || arg === '-h') args.help = true;
    else throw new Error(`unknown argument ${arg} (see --help)`);
  }
  if (args.reps !== null && !(Number.isInteger(args.reps) && args.reps >= 1 && args.reps <= 20)) {
    throw new Error('--reps must be an integer from 1 to 20');
  }
  if (!(Number.isInteger(args.soakMinutes) && args.soakMinutes >= 1 && args.soakMinutes <= 240)) {
    throw new Error('--soak-minutes must be an integer from 1 to 240');
  }
  if (!(Number.isInteger(args.soakRate) && args.soakRate >= 10 && args.soakRate <= 100_000)) {
    throw new Error('--soak-rate must be an integer from 10 to 100000 (jobs per second)');
  }
  // --held-snapshot reports 10-second windows: each phase is a whole number of them.
  for (const [flag, value] of [
    ['--warm-seconds', args.warmSeconds],
    ['--held-seconds', args.heldSeconds],
    ['--after-seconds', args.afterSeconds],
  ]) {
    if (!(Number.isInteger(value) && value >= 10 && value <= 3_600 && value % 10 === 0)) {
      throw new Error(`${flag} must be a multiple of 10 from 10 to 3600`);
    }
  }
  if (!(Number.isInteger(args.heldRate) && args.heldRate >= 10 && args.heldRate <= 50_000)) {
    throw new Error('--held-rate must be an integer from 10 to 50000 (jobs per second)');
  }
  return args;
}

module.exports = { FULL, QUICK, parseArgs };
