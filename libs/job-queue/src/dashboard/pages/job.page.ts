import { Job } from '../../entities/job.entity';
import { isFinishedStatus } from '../../entities/job-status.enum';
import type { JobLogEntry } from '../../interfaces/job-log-entry.interface';
import { html, prettyJson, SafeHtml } from '../html/escape';
import { actionForm, jobRow, layout, PageContext, table, time, withQuery } from '../html/layout';
import type { JobDependencies, RelatedJob } from '../job-dependencies.query';

export function isFinished(job: Job): boolean {
  return isFinishedStatus(job.status);
}

/**
 * `GET {path}/jobs/:id`: the job whole, its log, and retry and cancel; in a flow or with
 * dependencies, the jobs it waits for and those waiting for it (`related`). While the job is not
 * finished, `<body data-stream>` points the script at the live stream, after the log's last entry.
 */
export function jobPage(
  ctx: PageContext,
  job: Job,
  events: JobLogEntry[],
  related?: JobDependencies,
): SafeHtml {
  const path = `${ctx.base}/jobs/${encodeURIComponent(job.id)}`;
  const last = events[events.length - 1];
  return layout(ctx, {
    heading: `Job ${job.id}`,
    stream: isFinished(job) ? undefined : withQuery(`${path}/stream`, { after: last?.id }),
    body: html`<dl class="job">
        <dt>Type</dt>
        <dd id="job-type">${job.jobType}</dd>
        <dt>Status</dt>
        <dd><span id="job-status" class="status">${job.status}</span></dd>
        ${dependencyRows(ctx, job)}
        <dt>Stage</dt>
        <dd id="job-stage">${job.currentStage ?? ''}</dd>
        <dt>Progress</dt>
        <dd>
          <progress id="job-progress" max="100" value="${job.progress}">${job.progress}%</progress>
          <span id="job-progress-text">${job.progress}%</span>
        </dd>
        <dt>Attempts</dt>
        <dd id="job-attempts">
          ${job.attempts}${job.maxAttempts === null ? '' : ` / ${job.maxAttempts}`}
        </dd>
        <dt>Priority</dt>
        <dd>${job.priority}</dd>
        <dt>Unique key</dt>
        <dd>${job.uniqueKey ?? ''}</dd>
        <dt>Created</dt>
        <dd>${time(job.createdAt)}</dd>
        <dt>Run at</dt>
        <dd>${time(job.runAt)}</dd>
        <dt>Started</dt>
        <dd>${time(job.startedAt)}</dd>
        <dt>Finished</dt>
        <dd>${time(job.completedAt)}</dd>
        <dt>Worker</dt>
        <dd>${job.workerId ?? ''}</dd>
        <dt>Last error</dt>
        <dd><pre id="job-error" class="error-text">${job.lastError ?? ''}</pre></dd>
      </dl>
      <div class="actions">
        ${actionForm(ctx, `${path}/retry`, 'retry', 'Retry')}
        ${actionForm(ctx, `${path}/cancel`, 'cancel', 'Cancel')}
      </div>
      ${related ? relatedJobs(ctx, related) : ''}
      <h2>Data</h2>
      <pre id="job-data">${prettyJson(job.data)}</pre>
      <h2>Result</h2>
      <pre id="job-result">${prettyJson(job.result)}</pre>
      <h2>Log</h2>
      <ol id="job-events">
        ${events.map(eventItem)}
      </ol>`,
  });
}

/**
 * Its flow (a link to the flow's page) and step, and how many of its dependencies are unfinished
 * (the script keeps that count live), each only when the job has one.
 */
function dependencyRows(ctx: PageContext, job: Job): SafeHtml[] {
  const flow =
    job.flowId === null
      ? null
      : html`<a href="${ctx.base}/flows/${encodeURIComponent(job.flowId)}">${job.flowId}</a>`;
  const rows: Array<[label: string, id: string, value: string | SafeHtml | null]> = [
    ['Flow', 'job-flow', flow],
    ['Step', 'job-step', job.stepName],
    [
      'Dependencies',
      'job-dependencies',
      job.onDependencyFailure === null ? null : `${job.unfinishedDependencies} unfinished`,
    ],
  ];
  return rows
    .filter(([, , value]) => value !== null)
    .map(
      ([label, id, value]) =>
        html`<dt>${label}</dt>
          <dd id="${id}">${value}</dd>`,
    );
}

/** The jobs it waits for and those waiting for it, each side only when it has any. */
function relatedJobs(ctx: PageContext, related: JobDependencies): SafeHtml {
  const side = (heading: string, id: string, jobs: RelatedJob[]): SafeHtml | '' =>
    jobs.length === 0
      ? ''
      : html`<h2>${heading}</h2>
          ${table(
            id,
            ['ID', 'Step', 'Type', 'Status'],
            jobs.map((other) =>
              jobRow(
                ctx,
                other,
                html`<td class="step">${other.stepName ?? ''}</td>
                  <td>${other.jobType}</td>
                  <td><span class="status">${other.status}</span></td>`,
              ),
            ),
          )}`;
  return html`${side('Waits for', 'job-dependency-list', related.dependencies)}
  ${side('Waited for by', 'job-dependant-list', related.dependants)}
  ${related.capped ? html`<p class="muted">Only the first ${related.limit} of each are listed, by id.</p>` : ''}`;
}

/** One log row; the script renders rows that arrive live the same way, as text. */
function eventItem(entry: JobLogEntry): SafeHtml {
  return html`<li data-event-id="${entry.id}" class="event-${entry.kind}">
    ${time(entry.at)} <span class="kind">${entry.kind}</span>
    <span class="message">${entry.message ?? ''}</span>${
      entry.data === null || entry.data === undefined
        ? ''
        : html` <code class="data">${JSON.stringify(entry.data)}</code>`
    }
  </li>`;
}
