/**
 * The Hono environment of the console API (`/console/api/*`): the app's, plus the signed-in user.
 * `consoleSession` (console/session.ts) sets `consoleUser` on every request it lets through; the
 * console's data routes read the organisation only from it, never from the request.
 */
import type { AppEnv } from '../http/env.ts';

export const CONSOLE_ROLES = ['viewer', 'manager', 'owner'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

export interface ConsoleUser {
  userId: number;
  email: string;
  name: string | null;
  role: ConsoleRole;
  /** The organisation's internal id (orgs.id) and its GUID: every query is scoped by these. */
  orgId: number;
  orgGuid: string;
  orgName: string;
  /** The session's id (console_sessions.id): sign-out and password change end it or the others. */
  sessionId: string;
}

export interface ConsoleEnv {
  Variables: AppEnv['Variables'] & { consoleUser: ConsoleUser };
}
