import { ERROR_CODES } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import { ApiError } from './errors.ts';

/**
 * Per-credential token bucket (decisions: 50 requests/s, burst 100, per org configurable), kept
 * in the database (`rate_limits`) so that every instance takes from the same bucket: N instances
 * allow the rate once, not N times. One statement per request: an UPSERT that refills the bucket
 * for the time elapsed (the database's clock, the one clock all instances share), takes `cost`
 * tokens when there are enough, and returns whether it did and how many tokens are left. The row
 * is locked only for that statement.
 */
export interface RateLimit {
  perSecond: number;
  burst: number;
}

/** Tokens in the bucket after refilling since `r.at` (never more than the burst). */
const REFILLED = 'LEAST($3::float8, r.tokens + EXTRACT(EPOCH FROM (now() - r.at))::float8 * $2::float8)';
const TAKE_SQL = `
INSERT INTO rate_limits AS r (key, tokens, at, full_at, granted)
VALUES (
  $1,
  CASE WHEN $4::float8 <= $3::float8 THEN $3::float8 - $4::float8 ELSE $3::float8 END,
  now(),
  now() + make_interval(secs => CASE WHEN $4::float8 <= $3::float8 THEN $4::float8 ELSE 0 END / $2::float8),
  $4::float8 <= $3::float8
)
ON CONFLICT (key) DO UPDATE SET
  tokens = CASE WHEN ${REFILLED} >= $4::float8 THEN ${REFILLED} - $4::float8 ELSE ${REFILLED} END,
  at = now(),
  full_at = now() + make_interval(secs => ($3::float8 -
    CASE WHEN ${REFILLED} >= $4::float8 THEN ${REFILLED} - $4::float8 ELSE ${REFILLED} END) / $2::float8),
  granted = ${REFILLED} >= $4::float8
RETURNING granted, tokens`;

/** Rows of full buckets are the same as no row: purged now and then (one in `PURGE_EVERY` takes). */
const PURGE_EVERY = 1000;

export function tokenBuckets(db: Sql) {
  let takes = 0;
  return {
    /**
     * Take `cost` tokens from `key`'s bucket; 0 when taken, else the seconds until there would be
     * enough (Infinity when `cost` is more than the burst: it never fits).
     */
    async take(key: string, limit: RateLimit, cost = 1): Promise<number> {
      if (++takes % PURGE_EVERY === 0) void purgeFullBuckets(db).catch(() => {});
      const [row] = await db.query<{ granted: boolean; tokens: number }>(TAKE_SQL, [
        key,
        limit.perSecond,
        limit.burst,
        cost,
      ]);
      if (row!.granted) return 0;
      if (cost > limit.burst) return Number.POSITIVE_INFINITY;
      return (cost - Number(row!.tokens)) / limit.perSecond;
    },
  };
}
export type TokenBuckets = ReturnType<typeof tokenBuckets>;

/** Delete the rows of buckets that are full again (they hold nothing a missing row does not). */
export async function purgeFullBuckets(db: Sql): Promise<number> {
  return (await db.query('DELETE FROM rate_limits WHERE full_at < now() RETURNING key')).length;
}

/**
 * Take `cost` tokens for `key` (1 per request; a device push takes one per operation), or refuse
 * with 429 and Retry-After (the seconds until enough are free).
 */
export async function takeOrRefuse(
  buckets: TokenBuckets,
  key: string,
  limit: RateLimit,
  message: string,
  refused: { inc(): void },
  cost = 1,
): Promise<void> {
  const wait = await buckets.take(key, limit, cost);
  if (wait > 0) {
    refused.inc();
    const tooBig = !Number.isFinite(wait);
    throw new ApiError(
      429,
      ERROR_CODES.RATE_LIMITED,
      tooBig
        ? `${message}: ${cost} operations are more than this credential's burst of ${limit.burst}; send fewer at once`
        : message,
      undefined,
      {
        'Retry-After': String(
          tooBig ? Math.max(1, Math.ceil(limit.burst / limit.perSecond)) : Math.max(1, Math.ceil(wait)),
        ),
      },
    );
  }
}
