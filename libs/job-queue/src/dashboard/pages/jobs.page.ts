import { Job } from '../../entities/job.entity';
import { JobStatus } from '../../entities/job-status.enum';
import { html, SafeHtml } from '../html/escape';
import { jobRow, layout, PageContext, table, time, withQuery } from '../html/layout';

/** The listing's filters as the form and the links carry them (`?id=&type=&status=&key=`). */
export interface JobFilters {
  id?: string;
  type?: string;
  status?: string;
  key?: string;
}

/** `GET {path}/jobs`: the filter form, a page of jobs, and the link to the next page. */
export function jobsPage(
  ctx: PageContext,
  filters: JobFilters,
  jobs: Job[],
  nextCursor: string | null,
): SafeHtml {
  const listing = `${ctx.base}/jobs`;
  const rows = jobs.map((job) =>
    jobRow(
      ctx,
      job,
      html`<td>${job.jobType}</td>
        <td><span class="status">${job.status}</span></td>
        <td><progress max="100" value="${job.progress}">${job.progress}%</progress></td>
        <td>${job.attempts}${job.maxAttempts === null ? '' : ` / ${job.maxAttempts}`}</td>
        <td>${time(job.createdAt)}</td>
        <td>${job.uniqueKey ?? ''}</td>`,
    ),
  );
  const next =
    nextCursor === null
      ? ''
      : html`<p class="pager">
          <a rel="next" href="${withQuery(listing, { ...filters, cursor: nextCursor })}"
            >Next page</a
          >
        </p>`;
  return layout(ctx, {
    heading: 'Jobs',
    body: html`${filterForm(listing, filters)}
    ${table(
      'jobs',
      ['ID', 'Type', 'Status', 'Progress', 'Attempts', 'Created', 'Unique key'],
      rows,
    )}
    ${jobs.length === 0 ? html`<p class="empty">No jobs match.</p>` : ''} ${next}`,
  });
}

function filterForm(action: string, filters: JobFilters): SafeHtml {
  const statuses = ['', ...Object.values(JobStatus)].map(
    (status) =>
      html`<option value="${status}" ${status === (filters.status ?? '') ? html` selected` : ''}>
        ${status || 'any'}
      </option>`,
  );
  return html`<form method="get" action="${action}" class="filters" id="job-filters">
    <label>ID <input name="id" value="${filters.id ?? ''}" inputmode="numeric" /></label>
    <label>Type <input name="type" value="${filters.type ?? ''}" /></label>
    <label
      >Status
      <select name="status">
        ${statuses}
      </select></label
    >
    <label>Unique key starts with <input name="key" value="${filters.key ?? ''}" /></label>
    <button type="submit">Filter</button>
  </form>`;
}
