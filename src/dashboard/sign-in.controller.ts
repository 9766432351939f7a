import { Body, Controller, Get, Header, Post, Req, Res } from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { ADMIN_TOKEN_ENV } from '../common/admin-token.guard';
import { issueAdminSession, sessionCookie } from '../common/admin-session';
import { SIGN_IN_PAGE_POLICY, signInPage } from './sign-in.page';

/** What the routes use of Express' request and response (the example runs on Express). */
interface Request {
  headers: Record<string, string | string[] | undefined>;
  /** Whether it came over HTTPS. */
  secure: boolean;
}

interface Response {
  status(code: number): Response;
  set(field: string | Record<string, string>, value?: string): Response;
  send(body: string): void;
  redirect(status: number, url: string): void;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/** Where a signed-in browser goes: the dashboard the example mounts (dashboard.module.ts). */
const AFTER_SIGN_IN = '/queue';

/**
 * `GET /sign-in` shows a form; `POST /sign-in` trades the admin token for a session cookie
 * (src/common/admin-session.ts) and sends the browser to the dashboard; `POST /sign-out` drops
 * it. Open routes, as a login form is: the token is the credential, and a wrong one is a 401
 * that shows nothing of what was sent. A POST from another site's page (an `Origin` that is not
 * this host) is refused before the token is read.
 */
@Controller()
export class SignInController {
  @Get('sign-in')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', SIGN_IN_PAGE_POLICY)
  @Header('Cache-Control', 'no-store')
  form(): string {
    return signInPage({ refused: false });
  }

  @Post('sign-in')
  signIn(@Req() request: Request, @Res() response: Response, @Body('token') token: unknown): void {
    const expected = process.env[ADMIN_TOKEN_ENV];
    const right =
      sameOrigin(request) &&
      typeof token === 'string' &&
      expected !== undefined &&
      expected !== '' &&
      timingSafeEqual(sha256(token), sha256(expected));
    if (!right) {
      response
        .status(401)
        .set({
          'Content-Type': 'text/html; charset=utf-8',
          'Content-Security-Policy': SIGN_IN_PAGE_POLICY,
          'Cache-Control': 'no-store',
        })
        .send(signInPage({ refused: true }));
      return;
    }
    response
      .set('Set-Cookie', sessionCookie(issueAdminSession(expected), request.secure))
      .redirect(303, AFTER_SIGN_IN);
  }

  @Post('sign-out')
  signOut(@Req() request: Request, @Res() response: Response): void {
    response.set('Set-Cookie', sessionCookie(undefined, request.secure)).redirect(303, '/sign-in');
  }
}

/** No `Origin` (a non-browser client), or this host's own. */
function sameOrigin(request: Request): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === request.headers.host;
  } catch {
    return false;
  }
}
