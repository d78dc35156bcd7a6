/**
 * End of shift on the device: what it took since its last close (succeeded, voided, declined by
 * method and currency, and what is still queued), closed with a record that stays on the device
 * and is reported to the server by the sync loop, which answers its own totals of the shift.
 */
import type { Currency, ShiftRow, ShiftTotals } from '@kupah/contracts';
import { readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

export interface ShiftSummary {
  openedAt: string;
  /** When the summary was made (the close's time when it closes the shift). */
  at: string;
  totals: Required<ShiftTotals>;
}

export interface ShiftClose extends ShiftSummary {
  closeId: string;
  closedBy: string | null;
  /** The server recorded it (its totals are then `server`). */
  reportedAt: string | null;
  server: ShiftTotals | null;
}

/** At most this many closes are kept on the device (the server keeps them all). */
const KEEP_CLOSES = 60;

function add(rows: Map<string, ShiftRow>, method: string, currency: Currency, amountMinor: number): void {
  const key = `${method}|${currency}`;
  const row = rows.get(key) ?? { method, currency, count: 0, amountMinor: 0 };
  row.count += 1;
  row.amountMinor += amountMinor;
  rows.set(key, row);
}

const sorted = (rows: Map<string, ShiftRow>): ShiftRow[] =>
  [...rows.values()].sort((a, b) => a.method.localeCompare(b.method) || a.currency.localeCompare(b.currency));

export async function shiftOpenedAt(db: TerminalDatabase): Promise<string> {
  const [opened, pairing] = await Promise.all([readKv(db, 'shiftOpenedAt'), readKv(db, 'pairing')]);
  return opened ?? pairing?.pairedAt ?? new Date(0).toISOString();
}

/** This device's donations taken since the shift opened, up to `now`. */
export async function summariseShift(db: TerminalDatabase, now: Date): Promise<ShiftSummary> {
  const openedAt = await shiftOpenedAt(db);
  const at = now.toISOString();
  const rows = await db.outbox.where('createdAt').between(openedAt, at, true, false).toArray();
  // A payment of the shift voided later (even after the close) counts as voided.
  const voided = new Set(
    (await db.outbox.where('state').anyOf('queued', 'sending', 'done').toArray())
      .filter((r) => r.kind === 'void')
      .map((r) => String(r.request.receiptNum ?? '')),
  );
  const succeeded = new Map<string, ShiftRow>();
  const voids = new Map<string, ShiftRow>();
  const declined = new Map<string, ShiftRow>();
  const queued = new Map<string, ShiftRow>();
  for (const r of rows) {
    if ((r.kind !== 'charge' && r.kind !== 'schedule') || !r.currency || !r.method) continue;
    // A schedule is money taken only when its first payment was charged (it has that receipt);
    // one starting on a later day took nothing in this shift, as the server's totals say.
    if (r.kind === 'schedule' && r.state === 'done' && !r.receiptNum) continue;
    if (r.state === 'done') {
      add(r.receiptNum && voided.has(r.receiptNum) ? voids : succeeded, r.method, r.currency, r.amountMinor);
    } else if (r.state === 'declined') add(declined, r.method, r.currency, r.amountMinor);
    else if (r.state === 'queued' || r.state === 'sending') add(queued, r.method, r.currency, r.amountMinor);
  }
  return {
    openedAt,
    at,
    totals: {
      succeeded: sorted(succeeded),
      voided: sorted(voids),
      declined: sorted(declined),
      queued: sorted(queued),
    },
  };
}

/** Closes the shift now: the record is kept (to print, and for the sync loop to report) and a new shift opens. */
export async function closeShift(
  db: TerminalDatabase,
  now: Date,
  closedBy: string | null,
): Promise<ShiftClose> {
  return db.transaction('rw', db.outbox, db.kv, async () => {
    const summary = await summariseShift(db, now);
    const close: ShiftClose = {
      ...summary,
      closeId: crypto.randomUUID(),
      closedBy: closedBy?.trim() || null,
      reportedAt: null,
      server: null,
    };
    const closes = (await readKv(db, 'shiftCloses')) ?? [];
    await writeKv(db, 'shiftCloses', [close, ...closes].slice(0, KEEP_CLOSES));
    await writeKv(db, 'shiftOpenedAt', summary.at);
    return close;
  });
}

export async function listShiftCloses(db: TerminalDatabase): Promise<ShiftClose[]> {
  return (await readKv(db, 'shiftCloses')) ?? [];
}

export async function markShiftReported(
  db: TerminalDatabase,
  closeId: string,
  server: ShiftTotals,
  at: Date,
): Promise<void> {
  await db.transaction('rw', db.kv, async () => {
    const closes = (await readKv(db, 'shiftCloses')) ?? [];
    await writeKv(
      db,
      'shiftCloses',
      closes.map((c) => (c.closeId === closeId ? { ...c, reportedAt: at.toISOString(), server } : c)),
    );
  });
}
