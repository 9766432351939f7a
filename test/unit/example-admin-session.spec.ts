import {
  ADMIN_SESSION_COOKIE,
  ADMIN_SESSION_TTL_MS,
  isAdminSession,
  issueAdminSession,
  sessionCookie,
  sessionFromCookieHeader,
} from '../../src/common/admin-session';

/** The example's sign-in session (src/common/admin-session.ts): what its guard accepts. */
describe('example admin session', () => {
  const token = 'the-admin-token';
  const now = Date.UTC(2026, 11, 4, 6, 0, 0);

  it('is accepted for its token until it expires', () => {
    const session = issueAdminSession(token, now);
    expect(isAdminSession(session, token, now)).toBe(true);
    expect(isAdminSession(session, token, now + ADMIN_SESSION_TTL_MS - 1)).toBe(true);
    expect(isAdminSession(session, token, now + ADMIN_SESSION_TTL_MS)).toBe(false);
  });

  it('is refused under another token: a new admin token ends every session', () => {
    expect(isAdminSession(issueAdminSession(token, now), 'another-token', now)).toBe(false);
  });

  it('is refused when its expiry is pushed later or its signature is altered', () => {
    const [version, expiresAt, signature] = issueAdminSession(token, now).split('.');
    const later = `${version}.${Number(expiresAt) + ADMIN_SESSION_TTL_MS}.${signature}`;
    const flipped = `${version}.${expiresAt}.${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`;
    expect(isAdminSession(later, token, now)).toBe(false);
    expect(isAdminSession(flipped, token, now)).toBe(false);
    for (const junk of ['', 'v1', 'v1..', `v2.${expiresAt}.${signature}`, token]) {
      expect(isAdminSession(junk, token, now)).toBe(false);
    }
  });

  it('is stored HttpOnly, SameSite=Strict, for the dashboard only; Secure over HTTPS', () => {
    expect(sessionCookie('v1.1.x', false)).toBe(
      `${ADMIN_SESSION_COOKIE}=v1.1.x; Path=/queue; Max-Age=28800; HttpOnly; SameSite=Strict`,
    );
    expect(sessionCookie(undefined, true)).toBe(
      `${ADMIN_SESSION_COOKIE}=; Path=/queue; Max-Age=0; HttpOnly; SameSite=Strict; Secure`,
    );
  });

  it('is read from a Cookie header among other cookies', () => {
    const header = `a=1; ${ADMIN_SESSION_COOKIE}=v1.2.abc=; b=2`;
    expect(sessionFromCookieHeader(header)).toBe('v1.2.abc=');
    expect(sessionFromCookieHeader('a=1')).toBeUndefined();
    expect(sessionFromCookieHeader(undefined)).toBeUndefined();
  });
});
