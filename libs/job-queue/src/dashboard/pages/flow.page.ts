import { Job } from '../../entities/job.entity';
import { html, SafeHtml } from '../html/escape';
import { actionForm, jobRow, layout, PageContext, table, time } from '../html/layout';
import { isFinished } from './job.page';

/**
 * `GET {path}/flows/:flowId`: the flow's jobs in the order `flow()` made them, each with its
 * step, status and unfinished dependencies, and "Cancel flow" while any of them is unfinished.
 */
export function flowPage(ctx: PageContext, flowId: string, jobs: Job[]): SafeHtml {
  const path = `${ctx.base}/flows/${encodeURIComponent(flowId)}`;
  const unfinished = jobs.filter((job) => !isFinished(job)).length;
  const rows = jobs.map((job) =>
    jobRow(
      ctx,
      job,
      html`<td class="step">${job.stepName ?? ''}</td>
        <td>${job.jobType}</td>
        <td><span class="status">${job.status}</span></td>
        <td>${job.attempts}${job.maxAttempts === null ? '' : ` / ${job.maxAttempts}`}</td>
        <td class="count">${job.onDependencyFailure === null ? '' : job.unfinishedDependencies}</td>
        <td>${time(job.completedAt)}</td>`,
    ),
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
      ${table(
        'flow-jobs',
        ['ID', 'Step', 'Type', 'Status', 'Attempts', 'Unfinished dependencies', 'Finished'],
        rows,
      )}`,
  });
}
