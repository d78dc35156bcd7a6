/**
 * "Being confirmed": the server answered an item with a retryable Error whose outcome is not
 * known yet — PAYMENT_PENDING (the gateway call ended without an outcome: the card may or may
 * not have been charged, the server's recovery worker asks the gateway) or REQUEST_IN_PROGRESS /
 * TRANSACTION_IN_PROGRESS (another request is processing the same opId right now). Such an item
 * is neither declined nor failed: it stays unsent (`queued`, the same opId) and is sent again
 * every {@link CONFIRM_RECHECK_MS} until the server answers its outcome (Success with a receipt,
 * or Declined / Error). No separate state or index: it is read from the state and the error code
 * the answer left on the row, and the pacing from `lastAttemptAt`.
 *
 * Pure (no Dexie): the screens use it too.
 */
import type { OpResult } from '@kupah/contracts';
import type { OutboxItem } from './terminal-data.ts';

/** Error codes of a retryable answer that mean "the outcome is being determined". */
export const CONFIRMING_ERROR_CODES: ReadonlySet<string> = new Set([
  'PAYMENT_PENDING',
  'REQUEST_IN_PROGRESS',
  'TRANSACTION_IN_PROGRESS',
]);

/** How long after its last attempt an item being confirmed is asked about again. */
export const CONFIRM_RECHECK_MS = 30_000;

export const isConfirmingCode = (code: string | null | undefined): boolean =>
  typeof code === 'string' && CONFIRMING_ERROR_CODES.has(code);

/** An answer saying "not known yet, ask again": not a failure, not the server being busy. */
export const isConfirmationAnswer = (r: Pick<OpResult, 'retryable' | 'error'>): boolean =>
  r.retryable && isConfirmingCode(r.error?.errorCode);

/** Unsent, and the server's last word on it was that its outcome is being determined. */
export const isBeingConfirmed = (item: Pick<OutboxItem, 'state' | 'error'>): boolean =>
  (item.state === 'queued' || item.state === 'sending') && isConfirmingCode(item.error?.errorCode);

/** An item being confirmed that was asked about less than `recheckMs` ago waits its turn. */
export function confirmationNotDue(
  item: Pick<OutboxItem, 'state' | 'error' | 'lastAttemptAt'>,
  now: Date,
  recheckMs: number = CONFIRM_RECHECK_MS,
): boolean {
  if (!isBeingConfirmed(item) || !item.lastAttemptAt) return false;
  return now.getTime() - Date.parse(item.lastAttemptAt) < recheckMs;
}
