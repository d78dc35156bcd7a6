/**
 * When to try again: immediately, then 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 14 h, 20 h and 24 h
 * after each failure (ten attempts over about three days), each delay with ±10 % jitter.
 */
export const RETRY_DELAYS_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 50_400, 72_000, 86_400] as const;
export const MAX_ATTEMPTS = RETRY_DELAYS_SECONDS.length + 1;
/** An endpoint failing without a single success for this long is disabled. */
export const AUTO_DISABLE_AFTER_MS = 5 * 86_400_000;
/** A Retry-After longer than this is capped. */
export const MAX_RETRY_AFTER_SECONDS = 86_400;

/**
 * Delay before the next attempt after `attempts` failed ones, or null when the schedule is
 * exhausted (dead-letter). `random` in [0, 1) gives the jitter; a Retry-After is honoured.
 */
export function nextDelayMs(
  attempts: number,
  random: number,
  retryAfterSeconds: number | null = null,
): number | null {
  if (attempts >= MAX_ATTEMPTS) return null;
  const base = RETRY_DELAYS_SECONDS[attempts - 1];
  if (base === undefined) return null;
  const jittered = base * 1000 * (0.9 + 0.2 * random);
  const asked = retryAfterSeconds === null ? 0 : Math.min(retryAfterSeconds, MAX_RETRY_AFTER_SECONDS) * 1000;
  return Math.round(Math.max(jittered, asked));
}

/** Parse a Retry-After header: delta seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - nowMs) / 1000));
}
