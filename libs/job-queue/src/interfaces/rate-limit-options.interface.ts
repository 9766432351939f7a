/**
 * `@JobHandler(type, { rateLimit })`: at most `max` of the type's jobs start in any window of
 * `perMs` milliseconds (sliding, on the database's clock), across every node; per
 * `concurrencyKey` with `byKey`. Jobs over the limit wait: they neither fail nor spend an
 * attempt. @publicApi
 */
export interface RateLimitOptions {
  /** Starts allowed in any window of `perMs`: a whole number of at least 1. */
  max: number;
  /** The window's length in milliseconds: a whole number of at least 1. */
  perMs: number;
  /**
   * One window per `concurrencyKey` (a tenant's quota) instead of one for the type; jobs without
   * a key are not limited by it. Default: `false`.
   */
  byKey?: boolean;
}
