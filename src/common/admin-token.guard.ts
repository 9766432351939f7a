import {
  CanActivate,
  ExecutionContext,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';
import { isAdminSession, sessionFromCookieHeader } from './admin-session';

/** Where the token comes from. `npm start` sets a random one for the run when it is unset. */
export const ADMIN_TOKEN_ENV = 'EXAMPLE_ADMIN_TOKEN';

interface HttpRequest {
  headers: Record<string, string | string[] | undefined>;
}

interface HttpResponse {
  setHeader(name: string, value: string): void;
}

const sha256 = (text: string): Buffer => createHash('sha256').update(text, 'utf8').digest();

/**
 * Lets a request through only with `Authorization: Bearer <token>`, where `<token>` is
 * EXAMPLE_ADMIN_TOKEN (read once, as the app starts), or with the session cookie the dashboard's
 * sign-in form gives for that token (src/common/admin-session.ts; the browser sends it to the
 * dashboard's pages only). Anything else is a 401, in the example's one error shape
 * (HttpErrorFilter). The example puts it on the management routes (/jobs…) and the dashboard
 * (/queue); the routes that enqueue stay open.
 *
 * Both tokens are hashed before timingSafeEqual compares them: two digests of equal length, so
 * the time the comparison takes tells a client nothing about the token, not even its length.
 * With no token configured, no request gets through.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly token: string | undefined;
  private readonly expected: Buffer | undefined;

  constructor() {
    this.token = process.env[ADMIN_TOKEN_ENV] || undefined;
    this.expected = this.token ? sha256(this.token) : undefined;
    if (!this.expected) {
      new Logger(AdminTokenGuard.name).warn(
        `${ADMIN_TOKEN_ENV} is unset: every request to the management routes is refused`,
      );
    }
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const { headers } = http.getRequest<HttpRequest>();
    const header = headers.authorization;
    const token = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
    if (token !== undefined && this.expected && timingSafeEqual(sha256(token), this.expected)) {
      return true;
    }
    const session = sessionFromCookieHeader(headers.cookie);
    if (token === undefined && session !== undefined && this.token) {
      if (isAdminSession(session, this.token)) return true;
    }
    http.getResponse<HttpResponse>().setHeader('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedException({
      statusCode: 401,
      error: 'Unauthorized',
      message:
        token === undefined
          ? session === undefined
            ? 'Missing admin token: send "Authorization: Bearer <token>" (a browser: sign in at /sign-in)'
            : 'Expired or wrong session: sign in again at /sign-in'
          : 'Wrong admin token',
    });
  }
}
