import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';

/** Hono environment of the app: the services' dependencies and the authenticated caller. */
export interface AppEnv {
  Variables: {
    deps: Deps;
    caller: Caller;
    requestId: string;
  };
}
