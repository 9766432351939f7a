import { html, SafeHtml } from '../html/escape';
import { layout, PageContext } from '../html/layout';

/** A refusal or a failure, with its message (`#error`) and never a stack. */
export function errorPage(ctx: PageContext, status: number, message: string): SafeHtml {
  return layout(ctx, {
    heading: `${status} ${STATUS_TEXT[status] ?? 'Error'}`,
    body: html`<p id="error" class="error" role="alert">${message}</p>
      <p><a href="${ctx.base}">Back to the overview</a></p>`,
  });
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  500: 'Internal error',
  503: 'Unavailable',
};
