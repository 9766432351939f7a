import { Job } from '../../entities/job.entity';
import { html, SafeHtml } from '../html/escape';
import { actionForm, layout, PageContext, time } from '../html/layout';
import { isFinished } from './job.page';

/**
 * `GET {path}/flows/:flowId`: the flow's jobs in the order `flow()` made them, each with its
 * step, status and unfinished dependencies, and "Cancel flow" while any of them is unfinished.
 */
export function flowPage(ctx: PageContext, flowId: string, jobs: Job[]): SafeHtml {
  const path = `${ctx.base}/flows/${encodeURIComponent(flowId)}`;
  const unfinished = jobs.filter((job) => !isFinished(job)).length;
  const rows = jobs.map(
    (job) =>
      html`<tr data-job-id="${job.id}" class="status-${job.status}">
        <td><a href="${ctx.base}/jobs/${encodeURIComponent(job.id)}">${job.id}</a></td>
        <td class="step">${job.stepName ?? ''}</td>
        <td>${job.jobType}</td>
        <td><span class="status">${job.status}</span></td>
        <td>${job.attempts}${job.maxAttempts === null ? '' : ` / ${job.maxAttempts}`}</td>
        <td class="count">${job.onDependencyFailure === null ? '' : job.unfinishedDependencies}</td>
        <td>${time(job.completedAt)}</td>
      </tr>`,
  );
  return layout(ctx, {
    heading: `Flow ${flowId}`,
    body: html`<p id="flow-summary">${jobs.length} job(s), ${unfinished} unfinished.</p>
      ${
        unfinished === 0
          ? ''
          : html`<div class="actions">
              ${actionForm(ctx, `${path}/cancel`, 'cancel-flow', 'Cancel flow')}
            </div>`
      }
      <table id="flow-jobs">
        <thead>
          <tr>
            <th scope="col">ID</th>
            <th scope="col">Step</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Unfinished dependencies</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          ${rows}
        </tbody>
      </table>`,
  });
}
