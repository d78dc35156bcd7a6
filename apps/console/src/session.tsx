/**
 * The signed-in user, the organisation's settings the whole console reads (its time zone) and the
 * API client, for every screen.
 */
import { createContext, useContext } from 'react';
import type { ApiClient } from './api/client.ts';
import { ROLES, type Role, type SessionUser, type SettingsAnswer } from './api/types.ts';

export interface ConsoleContext {
  api: ApiClient;
  user: SessionUser;
  settings: SettingsAnswer | null;
  timeZone: string | undefined;
  reloadSettings(): void;
  signedOut(): void;
}

export const SessionContext = createContext<ConsoleContext | null>(null);

export function useConsole(): ConsoleContext {
  const c = useContext(SessionContext);
  if (!c) throw new Error('useConsole outside the signed-in console');
  return c;
}

export const roleAtLeast = (role: Role, least: Role) => ROLES.indexOf(role) >= ROLES.indexOf(least);

/** Whether the signed-in user may do what needs `least` (the server answers 403 all the same). */
export function useCan(least: Role): boolean {
  return roleAtLeast(useConsole().user.role, least);
}
