/**
 * Markup that is already safe: made only by `html` (or `raw` for the package's own constants).
 * Everything else put into a page goes through `escapeHtml`.
 */
export class SafeHtml {
  constructor(readonly value: string) {}

  toString(): string {
    return this.value;
  }
}

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/**
 * Text as HTML, safe in element content and in a quoted attribute alike: job data, results,
 * errors, log lines and names are user data, and the pages show them as text.
 */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"'`]/g, (char) => ENTITIES[char]);
}

/** A constant of this package (a stylesheet name, an SVG path): never user data. */
export function raw(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

function part(value: unknown): string {
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) return value.map(part).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(value);
}

/**
 * The one way pages are written: a tagged template whose every value is escaped, unless it is
 * `SafeHtml` made by this same function (a nested template), so no value can reach the page
 * unescaped by forgetting a call. Arrays are joined; `null`, `undefined` and `false` are nothing.
 */
export function html(strings: TemplateStringsArray, ...values: unknown[]): SafeHtml {
  let out = strings[0];
  values.forEach((value, i) => (out += part(value) + strings[i + 1]));
  return new SafeHtml(out);
}

/** JSON as the pages show it: indented, then escaped like any text. */
export function prettyJson(value: unknown): string {
  const text = JSON.stringify(value, null, 2);
  return text === undefined ? 'undefined' : text;
}
