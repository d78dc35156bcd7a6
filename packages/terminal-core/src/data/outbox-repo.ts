/**
 * Reads and state changes of the outbox table. Every change that must be all-or-nothing (an
 * item and its sequence number; a batch marked `sending`; a batch's answers) is one IndexedDB
 * transaction, so two tabs and a crash at any moment leave whole items behind.
 *
 * State machine (see `OutboxState`): queued → sending → done | declined | error, and sending →
 * queued when the answer was lost or is "try again". expired (never sent, past its expiry) and
 * discarded (by the cashier) are set on the device. A final state is never left again: a late or
 * duplicate answer for a final item changes nothing. A queued item whose answer was "outcome not
 * known yet" is being confirmed (`being-confirmed.ts`): asked about again at a slower pace, until
 * the server answers its outcome. Every transition into a final state deletes the item's sealed
 * card or bank data in the same transaction (no CVV is kept after the answer, not even sealed).
 */
import type { Currency, EnvelopeKey, OpResult } from '@kupah/contracts';
import Dexie from 'dexie';
import type { ClaimedOperation, ClaimRequest, QueueStats } from '../sync/sync-store.ts';
import { confirmationNotDue, isBeingConfirmed, isConfirmingCode } from './being-confirmed.ts';
import { prunePendingReceipts, receiptAfterAnswer, receiptInPush } from './receipt-requests.ts';
import type { OutboxItem, OutboxState, QueueSummary } from './terminal-data.ts';
import { type OutboxRow, readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

/** States whose items the server has not answered for good. */
export const UNSENT_STATES = ['queued', 'sending'] as const satisfies readonly OutboxState[];
export const FINAL_STATES = [
  'done',
  'declined',
  'error',
  'expired',
  'discarded',
] as const satisfies readonly OutboxState[];

export const isFinal = (state: OutboxState): boolean =>
  (FINAL_STATES as readonly OutboxState[]).includes(state);

/** Items within this long of their expiry are shown as at risk. */
export const EXPIRING_SOON_MS = 12 * 3_600_000;

/** The item as the UI sees it (no seal, no internal bookkeeping). */
export function toItem(row: OutboxRow): OutboxItem {
  const {
    seq: _seq,
    deviceId: _deviceId,
    sealed: _sealed,
    offline: _offline,
    outcomeSeenAt: _seen,
    ...item
  } = row;
  return item;
}

/**
 * What an item entering a final state loses: its sealed card or bank data. Nothing sends a final
 * item again, and no card number or CVV is kept after the answer (PCI DSS), not even sealed. For
 * `Table.update`, an undefined property is deleted from the stored row.
 */
const DROP_SEALED = { sealed: undefined } as const;

/** The row as it is stored once final: the same, without its sealed data. */
function withoutSealed(row: OutboxRow): OutboxRow {
  const { sealed: _sealed, ...rest } = row;
  return rest;
}

const stateRange = (state: OutboxState) =>
  [
    [state, Dexie.minKey],
    [state, Dexie.maxKey],
  ] as const;

/** Items of one state in entry order (oldest first), as a Dexie collection. */
function inState(db: TerminalDatabase, state: OutboxState) {
  const [lo, hi] = stateRange(state);
  return db.outbox.where('[state+seq]').between(lo, hi, true, true);
}

/** States from which an item may be replaced by a copy (a retry). */
export const RETRYABLE_STATES = ['declined', 'error', 'expired'] as const satisfies readonly OutboxState[];

/**
 * Writes a new item with the next sequence number; `build` gets the number and the total amount
 * of the unsent items (for the device limit) and may refuse by throwing. With `replacing`, the
 * old item is marked discarded ("retried as …") in the same transaction, if it is still
 * declined, failed or expired.
 */
export async function insertItem(
  db: TerminalDatabase,
  build: (seq: number, unsentTotalMinor: number) => OutboxRow,
  replacing?: string,
): Promise<OutboxRow> {
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const seq = ((await readKv(db, 'outboxSeq')) ?? 0) + 1;
    let row: OutboxRow | undefined;
    await changingUnsent(db, async (total) => {
      const built = build(seq, total);
      row = built;
      if (replacing !== undefined) {
        const old = await db.outbox.get(replacing);
        if (!old || !(RETRYABLE_STATES as readonly OutboxState[]).includes(old.state)) {
          throw new Error(`${old?.localRef ?? replacing} is ${old?.state ?? 'gone'}: it cannot be retried`);
        }
        await db.outbox.update(replacing, {
          state: 'discarded',
          discardReason: `retried as ${built.localRef}`,
          ...DROP_SEALED,
        });
      }
      await writeKv(db, 'outboxSeq', seq);
      await db.outbox.add(built);
      return built.amountMinor;
    });
    return row!;
  });
}

export async function unsentRows(db: TerminalDatabase): Promise<OutboxRow[]> {
  const lists = await Promise.all(UNSENT_STATES.map((s) => inState(db, s).toArray()));
  return lists.flat();
}

const sumAmounts = (rows: readonly OutboxRow[]) => rows.reduce((sum, r) => sum + r.amountMinor, 0);

/**
 * Runs `change` (which returns how much it moved into or out of the unsent total) and keeps the
 * stored total in step, in the caller's transaction (which must include `kv`). The total is
 * read before the change: a missing total is counted from the rows as they were.
 */
async function changingUnsent(
  db: TerminalDatabase,
  change: (total: number) => Promise<number>,
): Promise<void> {
  const total = (await readKv(db, 'unsentTotalMinor')) ?? sumAmounts(await unsentRows(db));
  const delta = await change(total);
  await writeKv(db, 'unsentTotalMinor', Math.max(0, total + delta));
}

export async function getRow(db: TerminalDatabase, id: string): Promise<OutboxRow | undefined> {
  return db.outbox.get(id);
}

/** Newest first; optionally only some states. */
export async function listItems(
  db: TerminalDatabase,
  filter: { states?: OutboxState[]; limit?: number } = {},
): Promise<OutboxItem[]> {
  const limit = filter.limit ?? 500;
  if (!filter.states) {
    const rows = await db.outbox.orderBy('seq').reverse().limit(limit).toArray();
    return rows.map(toItem);
  }
  const lists = await Promise.all(
    [...new Set(filter.states)].map((s) => inState(db, s).reverse().limit(limit).toArray()),
  );
  return lists
    .flat()
    .sort((a, b) => b.seq - a.seq)
    .slice(0, limit)
    .map(toItem);
}

/** The cashier saw this item's final outcome on the result screen (a no-op for other states). */
export async function markOutcomeSeen(db: TerminalDatabase, id: string, at: Date): Promise<void> {
  await db.transaction('rw', db.outbox, async () => {
    const row = await db.outbox.get(id);
    if (!row || row.outcomeSeenAt || !['done', 'declined', 'error'].includes(row.state)) return;
    await db.outbox.update(id, { outcomeSeenAt: at.toISOString() });
  });
}

export async function summarise(db: TerminalDatabase, now: Date): Promise<QueueSummary> {
  const [unsent, declined, expired] = await Promise.all([
    unsentRows(db),
    // Declines the cashier saw on the result screen, with the donor there, are not an alarm.
    inState(db, 'declined')
      .filter((r) => !r.outcomeSeenAt)
      .count(),
    inState(db, 'expired').count(),
  ]);
  const pendingTotals: Partial<Record<Currency, number>> = {};
  const confirmingTotals: Partial<Record<Currency, number>> = {};
  let expiringSoon = 0;
  let confirming = 0;
  const soon = now.getTime() + EXPIRING_SOON_MS;
  for (const row of unsent) {
    if (row.currency) pendingTotals[row.currency] = (pendingTotals[row.currency] ?? 0) + row.amountMinor;
    if (isBeingConfirmed(row)) {
      // Reached the server, which is finding out: it cannot expire unsent.
      confirming++;
      if (row.currency)
        confirmingTotals[row.currency] = (confirmingTotals[row.currency] ?? 0) + row.amountMinor;
    } else if (expires(row) && Date.parse(row.expiresAt) <= soon) expiringSoon++;
  }
  return {
    pending: unsent.length,
    pendingTotals,
    confirming,
    confirmingTotals,
    declined,
    expired,
    expiringSoon,
  };
}

/** Only money expires: a void or a donor save is worth forwarding whenever it can be. */
const expires = (row: Pick<OutboxRow, 'kind'>) => row.kind === 'charge' || row.kind === 'schedule';

/** Also recounts the unsent total from the rows (run at the start of every sync: any drift heals). */
export async function expireDue(db: TerminalDatabase, now: Date): Promise<number> {
  const nowIso = now.toISOString();
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const due = await db.outbox
      .where('expiresAt')
      .below(nowIso)
      .filter((r) => r.state === 'queued' && r.attempts === 0 && expires(r))
      .toArray();
    for (const row of due) {
      await db.outbox.update(row.id, {
        state: 'expired',
        error: {
          errorCode: 'OFFLINE_EXPIRED',
          message: `Not forwarded before ${row.expiresAt}: not charged. Take the donation again.`,
        },
        ...DROP_SEALED,
      });
    }
    await writeKv(db, 'unsentTotalMinor', sumAmounts(await unsentRows(db)));
    return due.length;
  });
}

export async function queueStats(db: TerminalDatabase, deviceId: string): Promise<QueueStats> {
  const rows = (await unsentRows(db)).filter((r) => r.deviceId === deviceId);
  const byKid: Record<string, number> = {};
  let totalMinor = 0;
  let confirming = 0;
  for (const r of rows) {
    totalMinor += r.amountMinor;
    if (r.kid) byKid[r.kid] = (byKid[r.kid] ?? 0) + 1;
    if (isBeingConfirmed(r)) confirming++;
  }
  return { depth: rows.length, totalMinor, byKid, confirming };
}

function operationOf(row: OutboxRow): ClaimedOperation {
  return {
    operation: {
      opId: row.id,
      kind: row.kind,
      deviceCreatedDate: row.createdAt,
      request: row.request,
      ...(row.offline !== undefined ? { offline: row.offline } : {}),
      sealed: row.sealed ?? null,
      // The receipt the donor asked for travels with the payment while it is still to be forwarded.
      ...receiptInPush(row),
    },
    amountMinor: row.amountMinor,
    kid: row.kid,
  };
}

/** Approximate JSON size of an operation in the push body. */
const sizeOf = (claimed: ClaimedOperation) => JSON.stringify(claimed.operation).length + 1;

export async function claimBatch(db: TerminalDatabase, req: ClaimRequest): Promise<ClaimedOperation[]> {
  const claimed = await db.transaction('rw', db.outbox, async () => {
    // Oldest first across both unsent states: the number of candidates is bounded by the batch.
    // Items being confirmed are asked about again at their own pace, not on every run.
    const take = (state: OutboxState) =>
      inState(db, state)
        .filter(
          (r) =>
            r.deviceId === req.deviceId &&
            !req.skip.has(r.id) &&
            !confirmationNotDue(r, req.now, req.confirmRecheckMs),
        )
        .limit(req.maxOperations)
        .toArray();
    const [queued, sending] = await Promise.all([take('queued'), take('sending')]);
    const candidates = [...queued, ...sending].sort((a, b) => a.seq - b.seq);
    const picked: OutboxRow[] = [];
    let bytes = 0;
    for (const row of candidates) {
      if (picked.length >= req.maxOperations) break;
      const size = sizeOf(operationOf(row));
      if (picked.length > 0 && bytes + size > req.maxBytes) break;
      picked.push(row);
      bytes += size;
    }
    const at = req.now.toISOString();
    for (const row of picked) {
      row.state = 'sending';
      row.attempts += 1;
      row.lastAttemptAt = at;
    }
    await db.outbox.bulkPut(picked);
    return picked;
  });
  return claimed.map(operationOf);
}

function answered(row: OutboxRow, r: OpResult): Partial<OutboxRow> {
  const base = {
    result: r,
    receiptNum: r.receiptNum ?? row.receiptNum,
    scheduleNum: r.scheduleNum ?? row.scheduleNum,
  };
  const error = r.error ? { errorCode: r.error.errorCode, message: r.error.message } : null;
  if (r.retryable) {
    // Once the server said the outcome is being determined, the item may have been charged: a
    // later "try again" of another kind (server busy) does not make it a plain waiting item.
    const stillConfirming = isConfirmingCode(row.error?.errorCode) && !isConfirmingCode(error?.errorCode);
    return { ...base, state: 'queued', error: stillConfirming ? row.error : error };
  }
  switch (r.status) {
    case 'Success':
      return { ...base, state: 'done', error: null };
    case 'Declined':
      return {
        ...base,
        state: 'declined',
        error: error ?? { errorCode: 'CARD_DECLINED', message: 'Declined' },
      };
    case 'Error':
      return { ...base, state: 'error', error: error ?? { errorCode: 'INTERNAL_ERROR', message: 'Error' } };
  }
}

export async function applyResults(
  db: TerminalDatabase,
  results: readonly OpResult[],
  encryptionKey: EnvelopeKey,
): Promise<void> {
  await db.transaction('rw', db.outbox, db.kv, async () => {
    await changingUnsent(db, async () => {
      const rows = await db.outbox.bulkGet(results.map((r) => r.opId));
      const updates: OutboxRow[] = [];
      let settled = 0;
      results.forEach((r, i) => {
        const row = rows[i];
        // Unknown, or already final (another tab, a replay): a final state is never left.
        if (!row || isFinal(row.state)) return;
        const next: OutboxRow = { ...row, ...answered(row, r) };
        if (next.receipt) next.receipt = receiptAfterAnswer(next);
        if (isFinal(next.state)) {
          settled += row.amountMinor;
          updates.push(withoutSealed(next));
        } else updates.push(next);
      });
      await db.outbox.bulkPut(updates);
      await prunePendingReceipts(db, updates);
      return -settled;
    });
    const pairing = await readKv(db, 'pairing');
    if (pairing && pairing.encryptionKey.kid !== encryptionKey.kid) {
      await writeKv(db, 'pairing', { ...pairing, encryptionKey });
    }
  });
}

export async function releaseBatch(db: TerminalDatabase, ids: readonly string[]): Promise<void> {
  await db.transaction('rw', db.outbox, async () => {
    const rows = await db.outbox.bulkGet([...ids]);
    const back = rows
      .filter((r): r is OutboxRow => r?.state === 'sending')
      .map((r) => ({ ...r, state: 'queued' as const }));
    await db.outbox.bulkPut(back);
  });
}

/** Sets final `error` on items not yet final (a push refused because of them). */
export async function failItems(
  db: TerminalDatabase,
  failures: readonly { opId: string; error: { errorCode: string; message: string } }[],
): Promise<void> {
  await db.transaction('rw', db.outbox, db.kv, async () => {
    await changingUnsent(db, async () => {
      let settled = 0;
      for (const f of failures) {
        const row = await db.outbox.get(f.opId);
        if (!row || isFinal(row.state)) continue;
        await db.outbox.update(f.opId, { state: 'error', error: f.error, ...DROP_SEALED });
        settled += row.amountMinor;
      }
      return -settled;
    });
  });
}

export class DiscardRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DiscardRefused';
  }
}

/** Why an item may not be discarded, or null when it may. */
function discardRefusal(row: OutboxRow): string | null {
  switch (row.state) {
    case 'declined':
    case 'error':
    case 'expired':
      return null;
    case 'queued':
      if (isBeingConfirmed(row)) {
        return `${row.localRef} is being confirmed with the card processor (it may have been charged): wait for the answer`;
      }
      // Sent before and the answer lost: the server may have charged it. Only its answer can tell.
      return row.attempts === 0
        ? null
        : `${row.localRef} may already have reached the server (its answer was lost): wait for the answer`;
    case 'sending':
      return `${row.localRef} is being sent right now: wait for its answer`;
    case 'done':
      return `${row.localRef} was charged (receipt ${row.receiptNum ?? 'pending'}): it cannot be discarded; void it instead`;
    case 'discarded':
      return `${row.localRef} is already discarded`;
  }
}

/**
 * Who discarded an item and when, kept on the row with its `discardReason` (the queue shows it).
 * The device has no staff accounts: `discardedBy` says how it was authorised.
 */
export interface DiscardRecord {
  /** ISO, the device's clock. */
  discardedAt: string;
  discardedBy: 'manager-pin';
}

/**
 * Marks an item `discarded` by the cashier: only an item never forwarded, or one the server
 * refused for good (declined, error) or that expired. Never one that was or may have been charged.
 * The queue asks for the manager PIN first; the row keeps who, when and why.
 */
export async function discardItem(db: TerminalDatabase, id: string, reason: string): Promise<OutboxRow> {
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const row = await db.outbox.get(id);
    if (!row) throw new DiscardRefused(`No outbox item ${id}`);
    const refusal = discardRefusal(row);
    if (refusal) throw new DiscardRefused(refusal);
    const record: DiscardRecord = { discardedAt: new Date().toISOString(), discardedBy: 'manager-pin' };
    const updated = withoutSealed({ ...row, state: 'discarded', discardReason: reason, ...record });
    await changingUnsent(db, async () => {
      await db.outbox.put(updated);
      return row.state === 'queued' ? -row.amountMinor : 0;
    });
    return updated;
  });
}

/**
 * Unsent items that can never be sent any more (sealed to another device id, or the device was
 * unpaired) become final errors, so the cashier sees them and takes them again.
 */
export async function failUnsendable(
  db: TerminalDatabase,
  keepDeviceId: string | null,
  error: { errorCode: string; message: string },
): Promise<number> {
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const orphans = (await unsentRows(db)).filter((r) => r.deviceId !== keepDeviceId);
    await changingUnsent(db, async () => {
      for (const row of orphans) await db.outbox.update(row.id, { state: 'error', error, ...DROP_SEALED });
      return -sumAmounts(orphans);
    });
    return orphans.length;
  });
}
