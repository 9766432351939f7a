import { JobStatus } from '../../entities/job-status.enum';
import type { JobSchedule } from '../../interfaces/schedule-options.interface';
import type { JobQueueStats } from '../../stats/job-queue-stats.types';
import { html, SafeHtml } from '../html/escape';
import { actionForm, layout, PageContext, table, time, withQuery } from '../html/layout';
import type { Throughput } from '../throughput.query';
import { throughputChart } from './throughput-chart';

const STATUSES = Object.values(JobStatus);

export interface OverviewData {
  stats: JobQueueStats;
  schedules: JobSchedule[];
  throughput: Throughput;
}

/** `GET {path}`: counts and pauses by type, the last hour's chart, the schedules. */
export function overviewPage(ctx: PageContext, data: OverviewData): SafeHtml {
  return layout(ctx, {
    heading: 'Overview',
    body: html`${throughputChart(data.throughput)}
      <h2>Job types</h2>
      ${typesTable(ctx, data.stats)}
      <h2>Schedules</h2>
      ${schedulesTable(ctx, data.schedules)}`,
  });
}

function typesTable(ctx: PageContext, stats: JobQueueStats): SafeHtml {
  const types = Object.keys(stats).sort();
  if (types.length === 0) return html`<p class="empty">No jobs yet.</p>`;
  const listing = (query: Record<string, string>) => withQuery(`${ctx.base}/jobs`, query);
  const rows = types.map((type) => {
    const counts = stats[type];
    const path = `${ctx.base}/types/${encodeURIComponent(type)}`;
    return html`<tr data-type="${type}" ${counts.paused ? html` class="paused"` : ''}>
      <th scope="row">
        <a href="${listing({ type })}">${type}</a
        >${counts.paused ? html` <span class="badge paused-marker">paused</span>` : ''}
      </th>
      ${STATUSES.map(
        (status) =>
          html`<td class="count" data-status="${status}">
            <a href="${listing({ type, status })}">${counts[status]}</a>
          </td>`,
      )}
      <td>
        ${
          counts.paused
            ? actionForm(ctx, `${path}/resume`, 'resume', 'Resume')
            : actionForm(ctx, `${path}/pause`, 'pause', 'Pause')
        }
      </td>
    </tr>`;
  });
  return table(
    'types',
    ['Type', ...STATUSES.map((status) => html`<a href="${listing({ status })}">${status}</a>`), ''],
    rows,
  );
}

function schedulesTable(ctx: PageContext, schedules: JobSchedule[]): SafeHtml {
  if (schedules.length === 0) return html`<p class="empty">No schedules.</p>`;
  const rows = schedules.map(
    (schedule) =>
      html`<tr data-schedule="${schedule.name}">
        <th scope="row">${schedule.name}</th>
        <td><code>${schedule.cron}</code> <span class="muted">${schedule.timezone}</span></td>
        <td>
          <a href="${withQuery(`${ctx.base}/jobs`, { type: schedule.jobType })}"
            >${schedule.jobType}</a
          >
        </td>
        <td class="next-fire">${time(schedule.nextFireAt)}</td>
        <td class="last-fire">${time(schedule.lastFireAt)}</td>
        <td>
          ${actionForm(ctx, `${ctx.base}/schedules/${encodeURIComponent(schedule.name)}/run`, 'run-schedule', 'Run now')}
        </td>
      </tr>`,
  );
  return table('schedules', ['Name', 'Cron', 'Type', 'Next fire', 'Last fire', ''], rows);
}
