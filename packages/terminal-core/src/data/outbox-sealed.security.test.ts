/**
 * No card number or CVV is kept once an item is final (PCI DSS: no CVV after authorisation), not
 * even sealed: every transition into done, declined, error, expired or discarded deletes the
 * sealed box in its own transaction, and the upgrade to schema 3 deletes it from rows written by
 * earlier versions. The box an item is sent with is bound to its clear fields (AAD v2).
 */
import { type SealedBox, sealAadV2 } from '@kupah/contracts';
import Dexie from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import {
  cardCharge,
  DECLINED_VISA,
  freshDbName,
  pairedTerminal,
  type TestTerminal,
  VISA,
} from '../../testing/test-support.ts';
import { type OutboxRow, SCHEMA_V1, TerminalDatabase } from './terminal-database.ts';

const HOUR = 3_600_000;
/** A CVV no id, time or amount of the tests contains as a whole JSON string. */
const CVV = '918';

const open: TestTerminal[] = [];
async function terminal() {
  const t = await pairedTerminal();
  open.push(t);
  return t;
}
afterEach(() => {
  for (const t of open.splice(0)) t.data.close();
});

const charge = (ccNum = VISA) => cardCharge({ card: { ccNum, expiry: '12/39', cvv: CVV } });

/** Every outbox row as stored (not through the data layer). */
async function rawRows(t: TestTerminal): Promise<OutboxRow[]> {
  const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
  try {
    return await db.outbox.toArray();
  } finally {
    db.close();
  }
}

/** The rows in `states` carry no `sealed` at all; the whole database holds no card number or CVV. */
async function expectNothingSecret(t: TestTerminal, ids: string[], ccNums: string[]) {
  const rows = await rawRows(t);
  for (const id of ids) {
    const row = rows.find((r) => r.id === id)!;
    expect(row).toBeDefined();
    expect(Object.keys(row)).not.toContain('sealed');
  }
  const dump = await t.dumpDatabase();
  for (const n of ccNums) expect(dump).not.toContain(n);
  expect(dump).not.toContain(`"${CVV}"`);
  expect(dump).not.toMatch(/"(ccNum|cvv)"/);
}

describe('final outbox items keep no sealed card data', () => {
  it('queued and sending items keep their box (it is what will be sent)', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(charge());
    const [row] = await rawRows(t);
    expect(row!.id).toBe(item.id);
    expect(row!.sealed?.ct).toMatch(/^[A-Za-z0-9_-]+$/);
  });

  it('done and declined: the box is deleted with the answer', async () => {
    const t = await terminal();
    const paid = await t.data.enqueue(charge());
    const declined = await t.data.enqueue(charge(DECLINED_VISA));
    await t.data.syncNow();
    expect((await t.data.waitForResult(paid.id, 0)).state).toBe('done');
    expect((await t.data.waitForResult(declined.id, 0)).state).toBe('declined');
    await expectNothingSecret(t, [paid.id, declined.id], [VISA, DECLINED_VISA]);
    // The queue screen still has what it shows.
    const shown = (await t.data.listOutbox()).find((i) => i.id === paid.id)!;
    expect(shown).toMatchObject({ amountMinor: 1800, currency: 'USD', display: { last4: '4242' } });
  });

  it('refused by the server for good (error): the box is deleted', async () => {
    const t = await terminal();
    t.server.decide = () => ({
      status: 'Error',
      retryable: false,
      error: { errorCode: 'VALIDATION_FAILED', message: 'no' },
    });
    const item = await t.data.enqueue(charge());
    await t.data.syncNow();
    expect((await t.data.waitForResult(item.id, 0)).state).toBe('error');
    await expectNothingSecret(t, [item.id], [VISA]);
  });

  it('discarded by the cashier, and discarded when retried as a copy: the box is deleted', async () => {
    const t = await terminal();
    t.setOnline(false);
    const never = await t.data.enqueue(charge());
    await t.data.discard(never.id, 'donor changed mind');
    await expectNothingSecret(t, [never.id], [VISA]);

    t.setOnline(true);
    const declined = await t.data.enqueue(charge(DECLINED_VISA));
    await t.data.syncNow();
    const copy = await t.data.retryWithInstrument(declined.id, { card: { ccNum: VISA, cvv: CVV } });
    await t.data.syncNow();
    expect((await t.data.waitForResult(copy.id, 0)).state).toBe('done');
    await expectNothingSecret(t, [declined.id, copy.id], [VISA, DECLINED_VISA]);
  });

  it('expired unsent: the box is deleted', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(charge());
    t.clock.now = new Date(t.clock.now.getTime() + 73 * HOUR);
    t.setOnline(true);
    await t.data.syncNow();
    expect((await t.data.waitForResult(item.id, 0)).state).toBe('expired');
    await expectNothingSecret(t, [item.id], [VISA]);
  });
});

describe('the upgrade to schema 3', () => {
  it('deletes the box of final rows written by earlier versions, and keeps it on unsent ones', async () => {
    const indexedDB = new IDBFactory();
    const name = freshDbName();
    // The database as versions 1 and 2 left it.
    const old = new Dexie(name, { indexedDB, IDBKeyRange });
    old.version(1).stores(SCHEMA_V1);
    old.version(2).stores({ donors: 'accountNum, *tokens, *contactHashes' });
    const box: SealedBox = { v: 1, kid: 'k_1', epk: { x: 'AAAA', y: 'BBBB' }, iv: 'CCCC', ct: 'DDDD' };
    const states = ['queued', 'sending', 'done', 'declined', 'error', 'expired', 'discarded'] as const;
    await old.table('outbox').bulkAdd(
      states.map((state, i) => ({
        id: `op-${state}`,
        state,
        seq: i + 1,
        createdAt: '',
        expiresAt: '',
        sealed: box,
      })),
    );
    old.close();

    const db = new TerminalDatabase(name, { indexedDB, IDBKeyRange });
    try {
      const rows = await db.outbox.toArray();
      const kept = rows.filter((r) => 'sealed' in r).map((r) => r.state);
      expect(kept.sort()).toEqual(['queued', 'sending']);
      expect(rows).toHaveLength(states.length);
    } finally {
      db.close();
    }
  });
});

describe('the box is bound to the clear fields it is sent with', () => {
  it('it opens under the v2 additional data of the item as sent (offline flag included)', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(charge());
    t.setOnline(true);
    await t.data.syncNow();
    const sent = t.server.received.find((op) => op.opId === item.id)!;
    expect(sent.offline).toBe(true);
    // The fake server opens with `sealAadV2(deviceId, op)` only.
    expect(t.server.opened.get(item.id)).toEqual({ card: { ccNum: VISA, cvv: CVV } });
    expect(sealAadV2(t.server.deviceId, sent)).not.toBe(
      sealAadV2(t.server.deviceId, { ...sent, request: { ...sent.request, amount: 1800 } }),
    );
    expect((await t.data.waitForResult(item.id, 0)).state).toBe('done');
  });
});
