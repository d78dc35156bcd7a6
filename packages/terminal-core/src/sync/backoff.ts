/**
 * How long the sync loop waits after failed runs: exponential back-off with full jitter. The
 * ceiling doubles with each consecutive failure (1 s, 2 s, 4 s … up to 5 min) and the wait is
 * drawn uniformly below it, so that a room of terminals coming back online together does not
 * knock on the server in step.
 */

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

export const SYNC_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 5 * 60_000 };

/** The ceiling of the wait after `failures` consecutive failures (≥ 1). */
export function backoffCeilingMs(failures: number, policy: BackoffPolicy = SYNC_BACKOFF): number {
  const exponent = Math.max(0, Math.min(failures - 1, 30));
  return Math.min(policy.maxMs, policy.baseMs * 2 ** exponent);
}

/**
 * The wait after `failures` consecutive failures: uniform in [0, ceiling], never shorter than
 * what the server asked for (`Retry-After`).
 */
export function backoffDelayMs(
  failures: number,
  random: () => number,
  policy: BackoffPolicy = SYNC_BACKOFF,
  atLeastMs = 0,
): number {
  const jittered = Math.floor(random() * backoffCeilingMs(failures, policy));
  return Math.max(jittered, Math.min(atLeastMs, policy.maxMs));
}
