import { ERROR_CODES } from '@kupah/contracts';
import { ApiError } from './errors.ts';

/**
 * Per-credential token bucket (decisions: 50 requests/s, burst 100, per org configurable).
 * Kept in this process: with several instances each enforces the limit on its own share.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

export function tokenBuckets(maxKeys = 100_000) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** Take one token at monotonic time `nowMs`; returns 0 when allowed, else the seconds to wait. */
    take(key: string, limit: RateLimit, nowMs: number): number {
      let b = buckets.get(key);
      if (!b) {
        b = { tokens: limit.burst, at: nowMs };
        buckets.set(key, b);
        if (buckets.size > maxKeys) buckets.delete(buckets.keys().next().value!);
      }
      b.tokens = Math.min(limit.burst, b.tokens + (Math.max(0, nowMs - b.at) / 1000) * limit.perSecond);
      b.at = nowMs;
      if (b.tokens >= 1) {
        b.tokens -= 1;
        return 0;
      }
      return (1 - b.tokens) / limit.perSecond;
    },
  };
}
export type TokenBuckets = ReturnType<typeof tokenBuckets>;

/** Take a token for `key`, or refuse with 429 and Retry-After (the seconds until one is free). */
export function takeOrRefuse(
  buckets: TokenBuckets,
  key: string,
  limit: RateLimit,
  message: string,
  refused: { inc(): void },
): void {
  const wait = buckets.take(key, limit, performance.now());
  if (wait > 0) {
    refused.inc();
    throw new ApiError(429, ERROR_CODES.RATE_LIMITED, message, undefined, {
      'Retry-After': String(Math.max(1, Math.ceil(wait))),
    });
  }
}
