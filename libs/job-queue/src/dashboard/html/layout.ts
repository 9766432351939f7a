import { html, SafeHtml } from './escape';

/** What every page needs to know about where it is and who asks. */
export interface PageContext {
  /** The dashboard's path as the browser sees it (global prefix included), e.g. `/queue`. */
  base: string;
  title: string;
  /** The CSRF token the page's forms send back; empty on pages without forms. */
  csrf: string;
  /** A short message after an action (`#notice`): text, or markup made by `html`. */
  notice?: string | SafeHtml;
}

export interface PageOptions {
  heading: string;
  body: SafeHtml;
  /** The live stream the page's script follows (`data-stream` on `<body>`), if any. */
  stream?: string;
}

/**
 * The frame of every page. Styles and script are the dashboard's own files, nothing inline:
 * the Content-Security-Policy allows no inline script or style.
 */
export function layout(ctx: PageContext, { heading, body, stream }: PageOptions): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${heading} · ${ctx.title}</title>
<link rel="stylesheet" href="${ctx.base}/assets/dashboard.css">
<script src="${ctx.base}/assets/dashboard.js" defer></script>
</head>
<body${stream ? html` data-stream="${stream}"` : ''}>
<header>
<a class="brand" href="${ctx.base}">${ctx.title}</a>
<nav><a href="${ctx.base}">Overview</a><a href="${ctx.base}/jobs">Jobs</a></nav>
</header>
<main>
<h1>${heading}</h1>
${ctx.notice ? html`<p id="notice" class="notice" role="status">${ctx.notice}</p>` : ''}
${body}
</main>
</body>
</html>
`;
}

/** A POST button with the page's CSRF token: `data-action` names what it does. */
export function actionForm(
  ctx: PageContext,
  action: string,
  dataAction: string,
  label: string,
): SafeHtml {
  return html`<form method="post" action="${action}" class="action">
    <input type="hidden" name="_csrf" value="${ctx.csrf}" /><button
      type="submit"
      data-action="${dataAction}"
    >
      ${label}
    </button>
  </form>`;
}

/** A table of `rows` under a header row of `headings` (text, or markup such as a link). */
export function table(id: string, headings: Array<string | SafeHtml>, rows: SafeHtml[]): SafeHtml {
  return html`<table id="${id}">
    <thead>
      <tr>
        ${headings.map((heading) => html`<th scope="col">${heading}</th>`)}
      </tr>
    </thead>
    <tbody>
      ${rows}
    </tbody>
  </table>`;
}

/**
 * A job's row: its id linking to its page, then `cells` (already made `<td>`s); the row
 * carries the job's id and status for the page's script and style.
 */
export function jobRow(
  ctx: PageContext,
  job: { id: string; status: string },
  cells: SafeHtml,
): SafeHtml {
  return html`<tr data-job-id="${job.id}" class="status-${job.status}">
    <td><a href="${ctx.base}/jobs/${encodeURIComponent(job.id)}">${job.id}</a></td>
    ${cells}
  </tr>`;
}

/** A point in time, readable and machine-readable; `—` when there is none. */
export function time(value: Date | string | null | undefined): SafeHtml {
  if (value === null || value === undefined) return html`<span class="none">—</span>`;
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return html`${String(value)}`;
  const iso = date.toISOString();
  return html`<time datetime="${iso}">${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

/** `path?name=value&…`, empty values left out. */
export function withQuery(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, value);
  }
  const search = params.toString();
  return search ? `${path}?${search}` : path;
}
