import { stripSeparators } from './methods.ts';

/**
 * The last four characters of a value after removing spaces and dashes, e.g. `4242` for
 * `4242 4242 4242 4242`. Values shorter than four characters are returned whole.
 */
export function last4(value: string): string {
  if (typeof value !== 'string') return '';
  return stripSeparators(value).slice(-4);
}

/**
 * Masks a card number for display: every digit but the last four becomes `*`
 * (`************4242`). Non-digits (spaces, dashes) are dropped first. Numbers of fewer than
 * 8 digits are fully starred, since their last four would reveal too much of them.
 */
export function maskPan(pan: string): string {
  if (typeof pan !== 'string') return '';
  const digits = pan.replace(/\D/g, '');
  if (digits.length < 8) return '*'.repeat(digits.length);
  return '*'.repeat(digits.length - 4) + digits.slice(-4);
}

/**
 * Masks a secret (API key, GUID) for display: `abcd****wxyz` — the first `keepStart` and the last
 * `keepEnd` characters around a fixed `****` (so the length is not revealed). A value too short
 * to keep at least half of it hidden (length < 2 × (keepStart + keepEnd)) is fully starred.
 */
export function maskSecret(value: string, keepStart = 4, keepEnd = 4): string {
  if (typeof value !== 'string' || value === '') return '';
  const start = clampCount(keepStart);
  const end = clampCount(keepEnd);
  if (value.length < 2 * (start + end)) return '*'.repeat(value.length);
  return `${value.slice(0, start)}****${end > 0 ? value.slice(-end) : ''}`;
}

function clampCount(n: number): number {
  return Number.isFinite(n) && n > 0 ? Math.floor(n) : 0;
}
