/**
 * What each console role may do. `owner`: everything; `manager`: all but users, the gateway and
 * API keys/sources; `viewer`: read only. A route states the least role it needs with
 * `requireRole`; a user below it gets 403 (and the console hides the control).
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../http/errors.ts';
import { CONSOLE_ROLES, type ConsoleEnv, type ConsoleRole } from './env.ts';

export function roleAtLeast(role: ConsoleRole, least: ConsoleRole): boolean {
  return CONSOLE_ROLES.indexOf(role) >= CONSOLE_ROLES.indexOf(least);
}

/** 403 unless the signed-in user's role is `least` or above. */
export function requireRole(least: ConsoleRole): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    const user = c.get('consoleUser');
    if (!user || !roleAtLeast(user.role, least)) {
      throw new ApiError(403, ERROR_CODES.FORBIDDEN, `This needs the ${least} role or above`);
    }
    await next();
  };
}
