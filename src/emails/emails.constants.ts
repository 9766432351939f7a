export const OUTGOING_EMAIL_JOB = 'email.send';

/** Each tenant's mail server takes this many connections from us at once. */
export const EMAILS_PER_TENANT = 2;

/** And accepts at most this many messages a minute from us per tenant (its provider's quota). */
export const EMAILS_PER_TENANT_PER_MINUTE = 100;

export interface OutgoingEmail {
  tenantId: string;
  to: string;
  subject: string;
}

export interface SentEmail {
  to: string;
  /** When this attempt began talking to the (simulated) mail server, ISO 8601. */
  startedAt: string;
  /** When the (simulated) mail server took it, ISO 8601. */
  sentAt: string;
}
