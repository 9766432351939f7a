'use strict';
// The printed tables: one per measurement, a row per peer, "median (min–max)" per metric.

function fmt(value) {
  if (!Number.isFinite(value)) return '–';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toFixed(3);
}

function cell(summary) {
  if (!summary || summary.n === 0) return '–';
  if (summary.n === 1) return fmt(summary.median);
  return `${fmt(summary.median)} (${fmt(summary.min)}–${fmt(summary.max)})`;
}

function table(headers, rows) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) =>
    cells
      .map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i])))
      .join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/**
 * --baseline: each pair's ratio of medians, today / base, per metric; `worse` or `better` when
 * today's median is outside the baseline's min–max (jobs/s: higher is better; the rest lower).
 */
function comparisonTable(comparisons, columns) {
  const ratio = (c) =>
    c ? `${c.ratio.toFixed(2)}x${c.worse ? ' worse' : c.better ? ' better' : ''}` : '–';
  const rows = comparisons.map((c) => [c.today, ...columns.map((k) => ratio(c.metrics[k]))]);
  return (
    `${table(['today / base (medians)', ...columns], rows)}\n` +
    "(worse/better: today's median outside the baseline's min–max; jobs/s higher is better, the rest lower)"
  );
}

/** Text of every measurement's table. */
function render(results, cfg) {
  const out = [];
  for (const m of results.measurements) {
    if (m.rows.length === 0) continue;
    const columns = [...m.metrics, ...(m.extras ?? [])];
    out.push(`\n${m.title}${cfg.reps > 1 ? `  [median (min–max) of ${cfg.reps} runs]` : ''}`);
    const rows = m.rows.map((row) => [
      row.label,
      ...columns.map((c) => (row.error ? '' : cell(row.summary[c]))),
      row.error ? `FAILED: ${row.error.split('\n')[0].slice(0, 100)}` : '',
    ]);
    out.push(table(['peer', ...columns, ''], rows));
    if (m.comparisons?.length) out.push(comparisonTable(m.comparisons, columns));
  }
  return out.join('\n');
}

module.exports = { render, fmt };
