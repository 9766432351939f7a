import { escapeHtml, html, prettyJson, raw } from '../../libs/job-queue/src/dashboard/html/escape';
import {
  dashboardPath,
  resolveDashboardOptions,
} from '../../libs/job-queue/src/dashboard/dashboard.options';

describe('dashboard html: one escaping path for every value', () => {
  it('escapes the characters that end text or a quoted attribute', () => {
    expect(escapeHtml(`<a href="x" title='y'>&\`</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&#96;&lt;/a&gt;',
    );
  });

  it('escapes every interpolated value, nested templates and raw constants excepted', () => {
    const hostile = '"><img src=x onerror=alert(1)>';
    const page = html`<p title="${hostile}">${hostile}${html`<b>${hostile}</b>`}${raw('<hr>')}</p>`;
    expect(page.toString()).toBe(
      '<p title="&quot;&gt;&lt;img src=x onerror=alert(1)&gt;">' +
        '&quot;&gt;&lt;img src=x onerror=alert(1)&gt;' +
        '<b>&quot;&gt;&lt;img src=x onerror=alert(1)&gt;</b><hr></p>',
    );
  });

  it('joins arrays, drops null, undefined and false, and shows numbers and zero', () => {
    expect(html`${['<a>', html`<i></i>`]}|${null}|${undefined}|${false}|${0}`.toString()).toBe(
      '&lt;a&gt;<i></i>||||0',
    );
  });

  it('shows JSON indented, escaped only where it is put into a page', () => {
    expect(prettyJson({ a: '<b>' })).toBe('{\n  "a": "<b>"\n}');
    expect(html`${prettyJson({ a: '<b>' })}`.toString()).toBe(
      '{\n  &quot;a&quot;: &quot;&lt;b&gt;&quot;\n}',
    );
    expect(prettyJson(undefined)).toBe('undefined');
  });
});

describe('dashboard options', () => {
  it('defaults the path, title and anonymous access', () => {
    expect(resolveDashboardOptions({})).toEqual({
      path: '/queue',
      guard: undefined,
      unsafeAllowAnonymous: false,
      title: 'Job queue',
    });
    expect(dashboardPath('/admin/queue/')).toBe('/admin/queue');
  });

  it.each([['queue'], ['/queue/:id'], ['/'], ['/a b'], [42]])('refuses the path %p', (path) => {
    expect(() => dashboardPath(path)).toThrow(/JobQueueDashboardModule: path .* is not a path/);
  });

  it('refuses a guard that is not one, a non-boolean switch and an unknown option', () => {
    expect(() => resolveDashboardOptions({ guard: {} as never })).toThrow(/guard/);
    expect(() => resolveDashboardOptions({ unsafeAllowAnonymous: 'yes' as never })).toThrow(
      /unsafeAllowAnonymous/,
    );
    expect(() => resolveDashboardOptions({ gaurd: 1 } as never)).toThrow(/option "gaurd"/);
  });
});
