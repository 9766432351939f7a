import { randomBytes } from 'node:crypto';
import { ADMIN_TOKEN_ENV } from './admin-token.guard';

/**
 * Makes a random admin token for this run when EXAMPLE_ADMIN_TOKEN is unset, and returns the
 * curl header to print. A token you set is never printed: the header names the variable instead.
 */
export function adminTokenForThisRun(): string {
  if (process.env[ADMIN_TOKEN_ENV]) return `"authorization: Bearer $${ADMIN_TOKEN_ENV}"`;
  process.env[ADMIN_TOKEN_ENV] = randomBytes(24).toString('base64url');
  return `'authorization: Bearer ${process.env[ADMIN_TOKEN_ENV]}'`;
}
