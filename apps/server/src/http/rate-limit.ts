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
