/**
 * Receipts a donor asked for by e-mail on the terminal. The address is kept with the outbox item
 * (never on a donor record) and reaches the server exactly where the payment does: still to be
 * forwarded, it travels in the payment's own push (`receiptEmail`); already forwarded (or forwarded
 * while the donor typed), it goes on its own with the receipt number once the payment has one. The
 * ids of items whose receipt the server does not have yet are kept in one small list, so a sync run
 * reads those rows only, not the outbox's history.
 */
import { receiptEmail } from '@kupah/contracts';
import type { ReceiptToSend } from '../sync/sync-store.ts';
import { toItem } from './outbox-repo.ts';
import { type OutboxItem, OutboxRefusal, type ReceiptRequest } from './terminal-data.ts';
import { type OutboxRow, readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

const EMAIL = receiptEmail();
/** States whose payment may still succeed or has: a receipt can be asked for. */
const RECEIPTABLE = new Set(['queued', 'sending', 'done']);

export async function requestReceipt(
  db: TerminalDatabase,
  id: string,
  email: string,
  language: 'en' | 'he',
  now: Date,
): Promise<OutboxItem> {
  const checked = EMAIL.safeParse(email.trim());
  if (!checked.success) throw new OutboxRefusal('INVALID', 'This is not an e-mail address');
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const row = await db.outbox.get(id);
    if (!row) throw new OutboxRefusal('INVALID', `There is no outbox item ${id}`);
    if (row.kind !== 'charge' && row.kind !== 'schedule')
      throw new OutboxRefusal('INVALID', 'Only a donation has a receipt');
    if (!RECEIPTABLE.has(row.state)) throw new OutboxRefusal('INVALID', 'This donation took no money');
    const receipt: ReceiptRequest = {
      email: checked.data,
      language,
      requestedAt: now.toISOString(),
      state: 'pending',
      inPush: null,
      error: null,
    };
    const next: OutboxRow = { ...row, receipt };
    await db.outbox.put(next);
    const pending = (await readKv(db, 'receiptsPending')) ?? [];
    if (!pending.includes(id)) await writeKv(db, 'receiptsPending', [...pending, id]);
    return toItem(next);
  });
}

/** What a push of `row` carries for its receipt (and remembers that it did). */
export function receiptInPush(row: OutboxRow): { receiptEmail?: string; receiptLanguage?: 'en' | 'he' } {
  if (row.receipt?.state !== 'pending') return {};
  row.receipt = { ...row.receipt, inPush: row.receipt.email };
  return { receiptEmail: row.receipt.email, receiptLanguage: row.receipt.language };
}

/**
 * The receipt after the payment's answer: a payment that succeeded with the address in its push has
 * it at the server (sent); one that took no money never will (failed). Anything else stays pending.
 */
export function receiptAfterAnswer(row: OutboxRow): ReceiptRequest | null | undefined {
  const r = row.receipt;
  if (r?.state !== 'pending') return r;
  if (row.state === 'done' && r.inPush === r.email) return { ...r, state: 'sent' };
  if (
    row.state === 'declined' ||
    row.state === 'error' ||
    row.state === 'expired' ||
    row.state === 'discarded'
  )
    return { ...r, state: 'failed', error: 'The donation took no money' };
  return r;
}

/** Drops ids whose receipt is no longer pending from the list (in the caller's transaction). */
export async function prunePendingReceipts(db: TerminalDatabase, rows: readonly OutboxRow[]): Promise<void> {
  const settled = new Set(rows.filter((r) => r.receipt && r.receipt.state !== 'pending').map((r) => r.id));
  if (settled.size === 0) return;
  const pending = (await readKv(db, 'receiptsPending')) ?? [];
  const left = pending.filter((id) => !settled.has(id));
  if (left.length !== pending.length) await writeKv(db, 'receiptsPending', left);
}

/** Receipts to send on their own: payments done, with a receipt number, whose address the server lacks. */
export async function receiptsToSend(db: TerminalDatabase, deviceId: string): Promise<ReceiptToSend[]> {
  const ids = (await readKv(db, 'receiptsPending')) ?? [];
  if (ids.length === 0) return [];
  const rows = await db.outbox.bulkGet(ids);
  return rows.flatMap((row) =>
    row?.deviceId === deviceId && row.state === 'done' && row.receiptNum && row.receipt?.state === 'pending'
      ? [{ id: row.id, receiptNum: row.receiptNum, email: row.receipt.email, language: row.receipt.language }]
      : [],
  );
}

/** The server took the receipt (sent) or refused it for good (failed, with its message). */
export async function markReceipt(
  db: TerminalDatabase,
  id: string,
  email: string,
  outcome: { state: 'sent' } | { state: 'failed'; error: string },
): Promise<void> {
  await db.transaction('rw', db.outbox, db.kv, async () => {
    const row = await db.outbox.get(id);
    // Asked again for another address meanwhile: that one is still to be sent.
    if (!row?.receipt || row.receipt.email !== email || row.receipt.state !== 'pending') return;
    const next: OutboxRow = {
      ...row,
      receipt: {
        ...row.receipt,
        state: outcome.state,
        error: outcome.state === 'failed' ? outcome.error : null,
      },
    };
    await db.outbox.put(next);
    await prunePendingReceipts(db, [next]);
  });
}
