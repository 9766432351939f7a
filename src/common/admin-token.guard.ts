import {
  CanActivate,
  ExecutionContext,
  Injectable,
  Logger,
  UnauthorizedException,
} from '@nestjs/common';
import { createHash, timingSafeEqual } from 'node:crypto';

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
 * EXAMPLE_ADMIN_TOKEN (read once, as the app starts). Anything else is a 401, in the example's one
 * error shape (HttpErrorFilter). The example puts it on the management routes (/jobs…); the
 * routes that enqueue stay open.
 *
 * Both tokens are hashed before timingSafeEqual compares them: two digests of equal length, so
 * the time the comparison takes tells a client nothing about the token, not even its length.
 * With no token configured, no request gets through.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly expected: Buffer | undefined;

  constructor() {
    const token = process.env[ADMIN_TOKEN_ENV];
    this.expected = token ? sha256(token) : undefined;
    if (!this.expected) {
      new Logger(AdminTokenGuard.name).warn(
        `${ADMIN_TOKEN_ENV} is unset: every request to the management routes is refused`,
      );
    }
  }

  canActivate(context: ExecutionContext): boolean {
    const http = context.switchToHttp();
    const header = http.getRequest<HttpRequest>().headers.authorization;
    const token = typeof header === 'string' ? /^Bearer +(\S+) *$/i.exec(header)?.[1] : undefined;
    if (token !== undefined && this.expected && timingSafeEqual(sha256(token), this.expected)) {
      return true;
    }
    http.getResponse<HttpResponse>().setHeader('WWW-Authenticate', 'Bearer');
    throw new UnauthorizedException({
      statusCode: 401,
      error: 'Unauthorized',
      message:
        token === undefined
          ? 'Missing admin token: send "Authorization: Bearer <token>"'
          : 'Wrong admin token',
    });
  }
}
