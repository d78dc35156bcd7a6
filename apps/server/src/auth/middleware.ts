import { ERROR_CODES, isGuid } from '@kupah/contracts';
import type { MiddlewareHandler } from 'hono';
import type { AppEnv } from '../http/env.ts';
import { ApiError } from '../http/errors.ts';
import { type TokenBuckets, takeOrRefuse } from '../http/rate-limit.ts';
import { hashCredential } from './credentials.ts';
import { type Caller, findApiKeyCaller, findSourceCaller } from './repo.ts';

export interface Accepts {
  /** `Authorization: <SOURCE_GUID>` (or `Bearer <GUID>`). */
  source: boolean;
  /** `APIKey: <API_KEY>`. */
  apiKey: boolean;
}

function expected(a: Accepts): string {
  if (a.source && a.apiKey) return 'Authorization: <SOURCE_GUID> or APIKey: <API_KEY>';
  return a.source ? 'Authorization: <SOURCE_GUID>' : 'APIKey: <API_KEY>';
}

/** The source GUID of an `Authorization` header (`<GUID>` or `Bearer <GUID>`), or null. */
export function sourceGuidOf(authorization: string | undefined): string | null {
  const guid = authorization
    ?.trim()
    .replace(/^Bearer\s+/i, '')
    .trim();
  return guid && isGuid(guid) ? guid : null;
}

/** 401 unless the request carries a live credential of an accepted kind; then the rate limit. */
export function authenticate(accepts: Accepts, buckets: TokenBuckets): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const { db } = c.var.deps;
    const authorization = c.req.header('authorization')?.trim();
    const apiKey = c.req.header('apikey')?.trim();
    let caller: Caller | null = null;
    if (accepts.source) {
      const guid = sourceGuidOf(authorization);
      if (guid) caller = await findSourceCaller(db, hashCredential(guid));
    }
    if (!caller && accepts.apiKey && apiKey) caller = await findApiKeyCaller(db, hashCredential(apiKey));
    if (!caller) {
      const sent = Boolean((accepts.source && authorization) || (accepts.apiKey && apiKey));
      throw new ApiError(
        401,
        ERROR_CODES.UNAUTHORIZED,
        sent ? 'The credential is unknown or revoked' : `Missing credential: send ${expected(accepts)}`,
      );
    }
    await takeOrRefuse(
      buckets,
      `${caller.type}:${caller.id}`,
      caller.org.settings.rateLimit,
      'Too many requests for this credential; slow down',
      c.var.deps.metrics.rateLimited,
    );
    c.set('caller', caller);
    await next();
  };
}
