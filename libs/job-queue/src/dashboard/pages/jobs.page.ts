import { Job } from '../../entities/job.entity';
import { JobStatus } from '../../entities/job-status.enum';
import { html, SafeHtml } from '../html/escape';
import { layout, PageContext, time, withQuery } from '../html/layout';

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
  const rows = jobs.map(
    (job) =>
      html`<tr data-job-id="${job.id}" class="status-${job.status}">
        <td><a href="${ctx.base}/jobs/${encodeURIComponent(job.id)}">${job.id}</a></td>
        <td>${job.jobType}</td>
        <td><span class="status">${job.status}</span></td>
        <td><progress max="100" value="${job.progress}">${job.progress}%</progress></td>
        <td>${job.attempts}${job.maxAttempts === null ? '' : ` / ${job.maxAttempts}`}</td>
        <td>${time(job.createdAt)}</td>
        <td>${job.uniqueKey ?? ''}</td>
      </tr>`,
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
      <table id="jobs">
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Progress</th>
            <th scope="col">Attempts</th>
            <th scope="col">Created</th>
            <th scope="col">Unique key</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>
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
