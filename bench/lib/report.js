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
  }
  return out.join('\n');
}

module.exports = { render, fmt };
