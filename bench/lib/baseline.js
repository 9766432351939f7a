'use strict';
// --baseline: a second build of the library runs as `ours@base` (each variant of ours has such a
// twin) in the same run as today's, so that a change's cost is read from one run, one machine
// state. bench/baseline.sh prepares the package; here: its check, which peers join, the order
// of each pair's runs and the ratios of their medians that the report prints.
const fs = require('node:fs');
const path = require('node:path');

const SUFFIX = '@base';

/**
 * Checks the unpacked baseline and hands it to the ours adapter through the environment, which
 * worker processes inherit (they find variants by name). Without --baseline any such variable
 * left in the environment is dropped, so that no twin appears unasked.
 */
function useBaseline(dir) {
  if (!dir) {
    delete process.env.BENCH_BASELINE_PACKAGE;
    return undefined;
  }
  const queueDir = path.resolve(dir);
  const manifest = path.join(queueDir, 'package.json');
  if (
    path.basename(queueDir) !== 'nest-pg-job-queue' ||
    path.basename(path.dirname(queueDir)) !== 'node_modules' ||
    !fs.existsSync(manifest)
  ) {
    throw new Error(
      `--baseline=${dir}: not an unpacked package at <folder>/node_modules/nest-pg-job-queue; ` +
        '`npm run bench -- --baseline=<commit|folder|.tgz>` prepares one',
    );
  }
  process.env.BENCH_BASELINE_PACKAGE = queueDir;
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  return { source: process.env.BENCH_BASELINE_SOURCE ?? queueDir, package: queueDir, version };
}

/** The peer names with each one's `@base` twin after it, where there is one not named already. */
function withTwins(names, peers) {
  return names.flatMap((name) =>
    peers.some((p) => p.name === name + SUFFIX) && !names.includes(name + SUFFIX)
      ? [name, name + SUFFIX]
      : [name],
  );
}

/**
 * The runners in slots: a twin joins its original's slot (same case), so the two run back to
 * back; alone otherwise.
 */
function pairRunners(runners) {
  const slots = [];
  for (const runner of runners) {
    const baseOf = runner.peer.variant.baseOf;
    const slot =
      baseOf &&
      slots.find((s) => s.length === 1 && s[0].peer.name === baseOf && s[0].unit === runner.unit);
    if (slot) slot.push(runner);
    else slots.push([runner]);
  }
  return slots;
}

/** A slot's order in repetition `rep`: a pair swaps every repetition, so neither always leads. */
const slotOrder = (slot, rep) => (rep % 2 === 0 ? [...slot].reverse() : slot);

/** Throughput is better higher; every other metric (ms, µs, MB, per job, x) better lower. */
const higherIsBetter = (metric) => metric.endsWith('/s');

/**
 * Per metric: today's median / the baseline's, and whether today's median lies outside the
 * baseline's min–max on the worse side (`worse`) or the better one (`better`). A baseline of one
 * run has no spread: nothing is flagged.
 */
function compareRows(today, base, metrics) {
  const out = {};
  for (const metric of metrics) {
    const t = today.summary[metric];
    const b = base.summary[metric];
    if (!t?.n || !b?.n) continue;
    const high = higherIsBetter(metric);
    const below = t.median < b.min;
    const above = t.median > b.max;
    out[metric] = {
      ratio: t.median / b.median,
      worse: b.n > 1 && (high ? below : above),
      better: b.n > 1 && (high ? above : below),
    };
  }
  return out;
}

/** `{ today, base, metrics }` of every pair whose runs both finished. */
function comparisons(slots, metrics) {
  return slots
    .filter((slot) => slot.length === 2 && !slot[0].row.error && !slot[1].row.error)
    .map(([today, base]) => ({
      today: today.row.label,
      base: base.row.label,
      metrics: compareRows(today.row, base.row, metrics),
    }));
}

module.exports = { useBaseline, withTwins, pairRunners, slotOrder, comparisons };
