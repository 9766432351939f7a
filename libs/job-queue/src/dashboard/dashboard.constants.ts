/** The resolved options of one registered dashboard (`ResolvedDashboardOptions`). */
export const DASHBOARD_OPTIONS = Symbol('JOB_QUEUE_DASHBOARD_OPTIONS');

/**
 * Sent with every response of the dashboard, refusals included: no script, style, frame or form
 * target but the dashboard's own (the chart is inline SVG, data: images only for it).
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const SECURITY_HEADERS: ReadonlyArray<readonly [string, string]> = [
  ['Content-Security-Policy', CONTENT_SECURITY_POLICY],
  ['X-Content-Type-Options', 'nosniff'],
  ['Referrer-Policy', 'same-origin'],
  ['Cache-Control', 'no-store'],
];

/** The cookie holding the CSRF token, scoped to the dashboard's path. */
export const CSRF_COOKIE = 'jq_dashboard_csrf';
/** The form field and the header that carry the same token back. */
export const CSRF_FIELD = '_csrf';
export const CSRF_HEADER = 'x-csrf-token';
