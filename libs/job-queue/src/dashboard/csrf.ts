import { ForbiddenException } from '@nestjs/common';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { CSRF_COOKIE, CSRF_FIELD, CSRF_HEADER } from './dashboard.constants';
import { DashboardRequest, header } from './dashboard.http';

/** 32 random bytes, as the cookie and the forms carry them. */
const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Double-submit CSRF tokens: a random token in an HttpOnly, SameSite=Strict cookie scoped to
 * the dashboard's path, and the same token in each page's forms. Another site can make a
 * browser send the cookie (not with SameSite=Strict, but older browsers) yet cannot read it to
 * put it in the form, so a POST whose field matches its cookie came from a dashboard page.
 */
export function newCsrfToken(): string {
  return randomBytes(32).toString('base64url');
}

export function readCookie(req: DashboardRequest, name: string): string | undefined {
  const cookies = header(req, 'cookie');
  if (!cookies) return undefined;
  for (const pair of cookies.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/** The request's token when it has a well-formed one, else undefined. */
export function csrfCookieToken(req: DashboardRequest): string | undefined {
  const token = readCookie(req, CSRF_COOKIE);
  return token !== undefined && TOKEN_PATTERN.test(token) ? token : undefined;
}

/** `Secure` only over HTTPS: a cookie marked so is not stored from a plain-HTTP response. */
export function csrfCookie(token: string, path: string, secure: boolean): string {
  return `${CSRF_COOKIE}=${token}; Path=${path}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The token a POST sent: the form's field, else the header (for scripts). */
function givenToken(req: DashboardRequest): string | undefined {
  const body = req.body;
  if (typeof body === 'object' && body !== null) {
    const field = (body as Record<string, unknown>)[CSRF_FIELD];
    if (typeof field === 'string') return field;
  }
  return header(req, CSRF_HEADER);
}

/** Whether two strings are equal, in time that depends only on their length. */
function sameToken(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/**
 * Refuses (403) a POST sent from another origin, or without the page's token: an `Origin` header
 * that names none of the request's hosts (see `requestHosts`), or a token missing or unlike the
 * cookie's.
 */
export function checkCsrf(req: DashboardRequest): void {
  const origin = header(req, 'origin');
  const from = origin === undefined ? undefined : originHost(origin);
  if (origin !== undefined && (from === undefined || !requestHosts(req).includes(from))) {
    throw new ForbiddenException(`Refused: the request came from another origin (${origin})`);
  }
  const cookie = csrfCookieToken(req);
  const given = givenToken(req);
  if (cookie === undefined || given === undefined || !sameToken(cookie, given)) {
    throw new ForbiddenException(
      'Refused: the form had no valid CSRF token. Reload the page and try again.',
    );
  }
}

/**
 * The hosts a browser may have sent this request to: `Host`, and the host a reverse proxy says
 * the browser asked for (the first `X-Forwarded-Host`, or `Forwarded: host=`). A proxy often
 * rewrites `Host` to its upstream's (nginx's default), and a page served through it posts with
 * the public host as `Origin`. Trusting the forwarded headers here gives another site nothing:
 * a browser sends no such header of a page's choosing across sites, and the token is checked
 * whatever the hosts.
 */
function requestHosts(req: DashboardRequest): string[] {
  const hosts = [header(req, 'host')];
  hosts.push(header(req, 'x-forwarded-host')?.split(',')[0].trim());
  const forwarded = header(req, 'forwarded')?.split(',')[0];
  const match = forwarded === undefined ? null : /(?:^|;)\s*host="?([^";]+)"?/i.exec(forwarded);
  hosts.push(match?.[1]);
  return hosts.filter((host): host is string => host !== undefined && host !== '');
}

function originHost(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}
