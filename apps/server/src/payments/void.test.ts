import { parseWebhook } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../outbox/repo.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';

describe.each(await testDatabases())('VoidPayment on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });
  const pay = async (over = {}) =>
    (await h.request('POST', '/v1/External/Charge', chargeBody(h, over), sourceAuth(h))).body;
  const voidIt = (receiptNum: string, extra = {}) =>
    h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum, ...extra },
      keyAuth(h),
    );

  it('voids a Success payment, answers { receiptNum, paymentStatus: Voided, error }, and queues the void webhook', async () => {
    h.clock.set('2026-11-22T15:04:05.000Z');
    const p = await pay();
    const r = await voidIt(p.receiptNum, { reason: 'donor asked' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      receiptNum: p.receiptNum,
      paymentStatus: 'Voided',
      error: { errorCode: null, message: null },
    });
    const [row] = await h.db.query<{ status: string; void_reason: string }>(
      'SELECT status, void_reason FROM payments WHERE receipt_num = $1',
      [p.receiptNum],
    );
    expect(row).toEqual({ status: 'Voided', void_reason: 'donor asked' });
    const events = (await listEvents(h.db, await orgId(), 'void')).filter(
      (e) => (e.payload as { paymentNumber: string }).paymentNumber === p.receiptNum,
    );
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      orgGuid: h.org.orgGuid,
      statusDateTime: '2026-11-22T15:04:05.000Z',
      paymentNumber: p.receiptNum,
      paymentStatus: 'Voided',
    });
    expect(parseWebhook('void', events[0]!.payload).success).toBe(true);
    h.clock.set(new Date().toISOString());
  });

  it('voiding a voided payment answers the same again, with no second event', async () => {
    const p = await pay();
    const a = await voidIt(p.receiptNum);
    const b = await voidIt(p.receiptNum);
    expect(b.status).toBe(200);
    expect(b.body).toEqual(a.body);
    const events = (await listEvents(h.db, await orgId(), 'void')).filter(
      (e) => (e.payload as { paymentNumber: string }).paymentNumber === p.receiptNum,
    );
    expect(events).toHaveLength(1);
  });

  it('Declined and Error payments are final: 409 INVALID_STATE; unknown receipt 404', async () => {
    const declined = await pay({ card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } });
    const r = await voidIt(declined.receiptNum);
    expect(r.status).toBe(409);
    expect(r.body.error.errorCode).toBe('INVALID_STATE');
    const err = await pay({ card: { ccNum: '4000000000000119', expiry: '12/30', cvv: '123' } });
    expect((await voidIt(err.receiptNum)).status).toBe(409);
    expect((await voidIt('R0')).status).toBe(404);
  });

  it('concurrent voids of one payment void it once', async () => {
    const p = await pay();
    const replies = await Promise.all(Array.from({ length: 10 }, () => voidIt(p.receiptNum)));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const events = (await listEvents(h.db, await orgId(), 'void')).filter(
      (e) => (e.payload as { paymentNumber: string }).paymentNumber === p.receiptNum,
    );
    expect(events).toHaveLength(1);
  });

  async function orgId(): Promise<number> {
    const [row] = await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [h.org.orgGuid]);
    return Number(row!.id);
  }
});
