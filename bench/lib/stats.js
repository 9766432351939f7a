'use strict';
// Small statistics helpers shared by every measurement.

function sorted(values) {
  return [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

/** Nearest-rank percentile (p in 0..100) of a list of numbers; NaN for an empty list. */
function percentile(values, p) {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * s.length);
  return s[Math.min(s.length - 1, Math.max(0, rank - 1))];
}

function median(values) {
  const s = sorted(values);
  if (s.length === 0) return NaN;
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** { median, min, max, n } of the repetitions of one measurement. */
function summarize(values) {
  const s = sorted(values);
  return {
    median: median(s),
    min: s.length ? s[0] : NaN,
    max: s.length ? s[s.length - 1] : NaN,
    n: s.length,
    values: [...values],
  };
}

module.exports = { percentile, median, summarize };
