/** The refusal of a dashboard registered with neither `guard` nor `unsafeAllowAnonymous`. */
export const NO_GUARD =
  'The job queue dashboard is refusing every request: register it with a guard, ' +
  'JobQueueDashboardModule.register({ guard: YourAuthGuard }), or, on a network nobody ' +
  'else reaches, with unsafeAllowAnonymous: true.';

/** Logged once at boot for such a registration. */
export const NO_GUARD_AT_BOOT = (path: string): string =>
  `JobQueueDashboardModule at ${path} has no guard: every request is refused (403). Give it ` +
  `one with register({ guard }), or set unsafeAllowAnonymous: true on purpose.`;

/** Logged once at boot when the dashboard is open to anyone. */
export const ANONYMOUS_AT_BOOT = (path: string): string =>
  `JobQueueDashboardModule at ${path} is open to anyone who reaches it ` +
  `(unsafeAllowAnonymous: true): it can retry, cancel and pause jobs.`;

/** The 404 of a flow page, or of cancelling a flow, when no job of the flow is left. */
export const NO_FLOW = (flowId: string): string =>
  `No flow with id '${flowId}': none of its jobs exists (unknown, or pruned whole).`;
