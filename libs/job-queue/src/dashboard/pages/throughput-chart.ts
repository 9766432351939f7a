import { html, SafeHtml } from '../html/escape';
import { Throughput, THROUGHPUT_MINUTES } from '../throughput.query';

const WIDTH = 600;
const HEIGHT = 120;
const BAR = WIDTH / THROUGHPUT_MINUTES;

/**
 * Completed and failed jobs per minute over the last hour as an inline SVG: bars drawn with
 * attributes and CSS classes (the policy allows no inline style), completed stacked on failed,
 * each with a `<title>` for its minute's counts.
 */
export function throughputChart({ completed, failed, capped }: Throughput): SafeHtml {
  const peak = Math.max(1, ...completed.map((count, i) => count + failed[i]));
  const scale = (count: number): number => Math.round((count / peak) * HEIGHT * 100) / 100;
  const bars = completed.map((done, i) => {
    const x = Math.round(i * BAR * 100) / 100;
    const failedHeight = scale(failed[i]);
    const doneHeight = scale(done);
    const ago = THROUGHPUT_MINUTES - 1 - i;
    return html`<g
      ><title>
        ${ago === 0 ? 'this minute' : `${ago} min ago`}: ${done} completed, ${failed[i]} failed</title
      ><rect
        class="failed"
        x="${x}"
        y="${HEIGHT - failedHeight}"
        width="${BAR - 1}"
        height="${failedHeight}"
      ></rect
      ><rect
        class="completed"
        x="${x}"
        y="${HEIGHT - failedHeight - doneHeight}"
        width="${BAR - 1}"
        height="${doneHeight}"
      ></rect
    ></g>`;
  });
  const total = (series: number[]) => series.reduce((sum, count) => sum + count, 0);
  return html`<figure class="chart">
    <svg
      id="throughput"
      viewBox="0 0 ${WIDTH} ${HEIGHT}"
      width="${WIDTH}"
      height="${HEIGHT}"
      role="img"
      aria-label="Jobs finished per minute over the last hour"
    >
      ${bars}
    </svg>
    <figcaption>
      Last hour, per minute (peak ${peak}):
      <span class="key completed">${total(completed)} completed</span>,
      <span class="key failed">${total(failed)} failed</span
      >.${capped ? ' A busy type: only its newest jobs were counted.' : ''}
    </figcaption>
  </figure>`;
}
