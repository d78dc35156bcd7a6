/**
 * RefundPayment end to end through the app, on the sandbox gateway (with faults played on the
 * refund call): full and partial refunds, the limits (over-refund, concurrent refunds, voided and
 * declined payments, another organisation), idempotency, a declined refund, a refund whose answer
 * was lost or never sent (recovery), the void webhook and the corrected receipt, the read API.
 */
import { randomBytes } from 'node:crypto';
import { parseWebhook } from '@kupah/contracts';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createApiKey, createOrg, createSource } from '../admin/admin-service.ts';
import type { Gateway } from '../gateway/gateway.ts';
import { staticGatewayRegistry } from '../gateway/registry.ts';
import { type SandboxFault, sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { solaGateway } from '../gateway/sola-gateway.ts';
import { findOrgById } from '../orgs/repo.ts';
import { listEvents } from '../outbox/repo.ts';
import { receiptDocument } from '../receipts/receipt-content.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { type SolaEmulator, startSolaEmulator } from '../testing/sola-emulator.ts';
import { paymentRecovery } from './recovery.ts';
import { refundPayment } from './refund-service.ts';

/** The sandbox, with a fault and an outcome chosen per refund, and its refund calls counted. */
function refundScript() {
  const faults = new Map<number, SandboxFault>();
  const outcomes = new Map<number, 'Declined' | 'Error'>();
  let calls = 0;
  const inner = sandboxGateway({
    profile: {
      // Keyed by amount (minor units): each test refunds amounts of its own.
      faultFor: (op, _key) => (op === 'refund' ? (pendingFault ?? null) : null),
      refundOutcome: (req) => outcomes.get(req.amountMinor) ?? 'Success',
    },
  });
  let pendingFault: SandboxFault | null = null;
  const gateway: Gateway = {
    ...inner,
    name: inner.name,
    async refund(req, opts) {
      calls++;
      pendingFault = faults.get(req.amountMinor) ?? null;
      return inner.refund(req, opts);
    },
  };
  return {
    gateway,
    fault: (amountMinor: number, f: SandboxFault | null) =>
      f ? faults.set(amountMinor, f) : faults.delete(amountMinor),
    decline: (amountMinor: number, o: 'Declined' | 'Error') => outcomes.set(amountMinor, o),
    calls: () => calls,
  };
}

describe.each(await testDatabases())('RefundPayment on %s', { timeout: 60_000 }, (kind) => {
  let h: Harness;
  let gw: ReturnType<typeof refundScript>;
  let emu: SolaEmulator;
  let orgId: number;
  beforeAll(async () => {
    gw = refundScript();
    // Sandbox credentials reach the scripted sandbox; live ones Sola, on the local emulator (loopback HTTP).
    emu = await startSolaEmulator();
    h = await createHarness(kind, {
      gateways: () =>
        staticGatewayRegistry(
          gw.gateway,
          solaGateway({ key: emu.key, url: emu.url, reportUrl: emu.reportUrl }),
        ),
      calls: { timeoutMs: 600, waitForOutcomeMs: 500 },
    });
    const [row] = await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [h.org.orgGuid]);
    orgId = Number(row!.id);
  });
  afterAll(async () => {
    await h?.close();
    await emu?.close();
  });
  beforeEach(() => {
    h.clock.set(new Date().toISOString());
  });

  const pay = async (over: Record<string, unknown> = {}) => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h, over), sourceAuth(h));
    expect(r.status).toBe(200);
    return r.body.receiptNum as string;
  };
  const uid = () => `rf-${randomBytes(6).toString('hex')}`;
  const refund = (
    receiptNum: string,
    extra: Record<string, unknown> = {},
    auth: Record<string, string> = keyAuth(h),
  ) =>
    h.request(
      'POST',
      '/v1/External/RefundPayment',
      { orgGUID: h.org.orgGuid, receiptNum, reason: 'donor asked', uniqueTransactionId: uid(), ...extra },
      auth,
    );
  const paymentOf = async (receiptNum: string) =>
    (
      await h.db.query<{ status: string; refunded_minor: number }>(
        'SELECT status, refunded_minor::int AS refunded_minor FROM payments WHERE receipt_num = $1',
        [receiptNum],
      )
    )[0]!;
  const refundsOf = (receiptNum: string) =>
    h.db.query<{
      status: string;
      amount_minor: number;
      actor: string | null;
      reason: string;
      error_code: string | null;
    }>(
      `SELECT r.status, r.amount_minor::int AS amount_minor, r.actor, r.reason, r.error_code FROM refunds r
       JOIN payments p ON p.id = r.payment_id WHERE p.receipt_num = $1 ORDER BY r.id`,
      [receiptNum],
    );
  const voidEvents = async (receiptNum: string) =>
    (await listEvents(h.db, orgId, 'void')).filter(
      (e) => (e.payload as { paymentNumber: string }).paymentNumber === receiptNum,
    );
  const recover = async () => {
    h.clock.set(new Date(h.clock.now.getTime() + 120_000).toISOString());
    return paymentRecovery(h.deps).drain();
  };

  it('a full refund (no amount): Refunded, the refund recorded with who asked, the void webhook says Refunded', async () => {
    h.clock.set('2026-11-24T10:00:00.000Z');
    const receiptNum = await pay({ amount: 18 });
    const r = await refund(receiptNum, { reason: 'charged twice' });
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(r.body).toMatchObject({
      receiptNum,
      paymentStatus: 'Refunded',
      refundStatus: 'Succeeded',
      refundAmount: 18,
      refundedAmount: 18,
      remainingAmount: 0,
      currency: 'USD',
      error: { errorCode: null, message: null },
    });
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Refunded', refunded_minor: 1800 });
    const [row] = await refundsOf(receiptNum);
    expect(row).toMatchObject({
      status: 'succeeded',
      amount_minor: 1800,
      reason: 'charged twice',
      error_code: null,
    });
    expect(row!.actor).toMatch(/^apiKey:/);
    expect(row!.actor).not.toContain(h.org.apiKey);
    const events = await voidEvents(receiptNum);
    expect(events).toHaveLength(1);
    expect(events[0]!.payload).toEqual({
      orgGuid: h.org.orgGuid,
      statusDateTime: '2026-11-24T10:00:00.000Z',
      paymentNumber: receiptNum,
      paymentStatus: 'Refunded',
      amount: '18.00',
      refundAmount: '18.00',
      refundedAmount: '18.00',
      currency: 'USD',
      refundReason: 'charged twice',
    });
    const parsed = parseWebhook('void', events[0]!.payload);
    expect(parsed.success).toBe(true);
  });

  it('partial, then the rest: PartiallyRefunded → Refunded, a void webhook each; then nothing remains (409)', async () => {
    const receiptNum = await pay({ amount: 50 });
    const a = await refund(receiptNum, { amount: 12.5 });
    expect(a.body).toMatchObject({
      paymentStatus: 'PartiallyRefunded',
      refundStatus: 'Succeeded',
      refundAmount: 12.5,
      refundedAmount: 12.5,
      remainingAmount: 37.5,
    });
    expect(await paymentOf(receiptNum)).toEqual({ status: 'PartiallyRefunded', refunded_minor: 1250 });
    const b = await refund(receiptNum, { amount: '37.50' });
    expect(b.body).toMatchObject({
      paymentStatus: 'Refunded',
      refundAmount: 37.5,
      refundedAmount: 50,
      remainingAmount: 0,
    });
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Refunded', refunded_minor: 5000 });
    const events = await voidEvents(receiptNum);
    expect(events.map((e) => (e.payload as { paymentStatus: string }).paymentStatus)).toEqual([
      'PartiallyRefunded',
      'Refunded',
    ]);
    expect(events.map((e) => (e.payload as { refundedAmount: string }).refundedAmount)).toEqual([
      '12.50',
      '50.00',
    ]);
    const c = await refund(receiptNum, { amount: 0.01 });
    expect(c.status).toBe(409);
    expect(c.body.error.errorCode).toBe('REFUND_EXCEEDS_REMAINING');
  });

  it('more than remains is refused (409 REFUND_EXCEEDS_REMAINING naming amount); nothing is recorded or sent; the id is not used up', async () => {
    const receiptNum = await pay({ amount: 20 });
    const before = gw.calls();
    const id = uid();
    const r = await refund(receiptNum, { amount: 20.01, uniqueTransactionId: id });
    expect(r.status).toBe(409);
    expect(r.body.error.errorCode).toBe('REFUND_EXCEEDS_REMAINING');
    expect(r.body.error.fields).toEqual([{ field: 'amount', message: 'must be at most 20' }]);
    expect(gw.calls()).toBe(before);
    expect(await refundsOf(receiptNum)).toEqual([]);
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Success', refunded_minor: 0 });
    const ok = await refund(receiptNum, { amount: 5, uniqueTransactionId: id });
    expect(ok.body.refundStatus).toBe('Succeeded');
  });

  it('five concurrent refunds of 40% each: two pass, three are refused, never more than the amount', async () => {
    const receiptNum = await pay({ amount: 100 });
    const replies = await Promise.all(Array.from({ length: 5 }, () => refund(receiptNum, { amount: 40 })));
    const passed = replies.filter((r) => r.status === 200);
    const refused = replies.filter((r) => r.status === 409);
    expect(passed).toHaveLength(2);
    expect(refused).toHaveLength(3);
    for (const r of refused) expect(r.body.error.errorCode).toBe('REFUND_EXCEEDS_REMAINING');
    expect(await paymentOf(receiptNum)).toEqual({ status: 'PartiallyRefunded', refunded_minor: 8000 });
    expect((await refundsOf(receiptNum)).map((r) => r.status)).toEqual(['succeeded', 'succeeded']);
    expect(await voidEvents(receiptNum)).toHaveLength(2);
  });

  it('a voided, declined or failed payment cannot be refunded (409 PAYMENT_NOT_REFUNDABLE); a refunded one cannot be voided', async () => {
    const voided = await pay();
    expect(
      (
        await h.request(
          'POST',
          '/v1/External/VoidPayment',
          { orgGUID: h.org.orgGuid, receiptNum: voided },
          keyAuth(h),
        )
      ).status,
    ).toBe(200);
    const declined = await pay({ card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } });
    const failed = await pay({ card: { ccNum: '4000000000000119', expiry: '12/30', cvv: '123' } });
    for (const receiptNum of [voided, declined, failed]) {
      const r = await refund(receiptNum);
      expect(r.status).toBe(409);
      expect(r.body.error.errorCode).toBe('PAYMENT_NOT_REFUNDABLE');
      expect(await refundsOf(receiptNum)).toEqual([]);
    }
    expect((await refund('R1')).status).toBe(404);
    const part = await pay({ amount: 10 });
    await refund(part, { amount: 1 });
    const v = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: part },
      keyAuth(h),
    );
    expect(v.status).toBe(409);
    expect(v.body.error.errorCode).toBe('INVALID_STATE');
  });

  it('a refund the gateway declines: 200 refundStatus Failed with its code, the payment unchanged, a failed refund recorded, no webhook', async () => {
    const receiptNum = await pay({ amount: 30 });
    gw.decline(777, 'Declined');
    const r = await refund(receiptNum, { amount: 7.77 });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      paymentStatus: 'Success',
      refundStatus: 'Failed',
      refundAmount: 7.77,
      refundedAmount: 0,
      remainingAmount: 30,
      error: { errorCode: 'REFUND_DECLINED' },
    });
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Success', refunded_minor: 0 });
    expect(await refundsOf(receiptNum)).toMatchObject([
      { status: 'failed', amount_minor: 777, error_code: 'REFUND_DECLINED' },
    ]);
    expect(await voidEvents(receiptNum)).toHaveLength(0);
    // The whole amount can still be refunded.
    expect((await refund(receiptNum)).body).toMatchObject({ paymentStatus: 'Refunded', refundAmount: 30 });
  });

  it("another organisation's API key cannot refund: 404 with its own orgGUID, 403 with this one", async () => {
    const receiptNum = await pay();
    const other = await createOrg(h.db, 'Other Org');
    const r = await h.request(
      'POST',
      '/v1/External/RefundPayment',
      { orgGUID: other.orgGuid, receiptNum, reason: 'x', uniqueTransactionId: uid() },
      { apikey: other.apiKey },
    );
    expect(r.status).toBe(404);
    expect(r.body.error.errorCode).toBe('NOT_FOUND');
    const s = await refund(receiptNum, {}, { apikey: other.apiKey });
    expect(s.status).toBe(403);
    // A source GUID (a public form) may not refund at all.
    expect((await refund(receiptNum, {}, sourceAuth(h))).status).toBe(401);
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Success', refunded_minor: 0 });
  });

  it('the same request again replays its answer and refunds nothing more; the id with another body, or a Charge’s id, is 409', async () => {
    const receiptNum = await pay({ amount: 40 });
    const id = uid();
    const first = await refund(receiptNum, { amount: 10, uniqueTransactionId: id });
    const calls = gw.calls();
    const again = await refund(receiptNum, { amount: 10, uniqueTransactionId: id });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(gw.calls()).toBe(calls);
    expect(await paymentOf(receiptNum)).toEqual({ status: 'PartiallyRefunded', refunded_minor: 1000 });
    const other = await refund(receiptNum, { amount: 11, uniqueTransactionId: id });
    expect(other.status).toBe(409);
    expect(other.body.error.errorCode).toBe('DUPLICATE_TRANSACTION');
    const chargeId = `tx-${randomBytes(6).toString('hex')}`;
    await pay({ uniqueTransactionId: chargeId });
    const reused = await refund(receiptNum, { amount: 1, uniqueTransactionId: chargeId });
    expect(reused.status).toBe(409);
    expect(reused.body.error.errorCode).toBe('DUPLICATE_TRANSACTION');
  });

  it('the console path: refundPayment() with a console user as actor, replayed by its id, the same money path', async () => {
    const receiptNum = await pay({ amount: 14 });
    const org = (await findOrgById(h.db, orgId))!;
    const who = { org, sandbox: true, actor: 'console:user-42' };
    const ask = {
      receiptNum: receiptNum.toLowerCase(),
      amountMinor: 400,
      reason: 'phone call',
      uniqueTransactionId: uid(),
    };
    const a = await refundPayment(h.deps, who, ask);
    expect(a).toMatchObject({
      receiptNum,
      paymentStatus: 'PartiallyRefunded',
      refundStatus: 'Succeeded',
      refundAmount: 4,
    });
    const calls = gw.calls();
    expect(await refundPayment(h.deps, who, ask)).toEqual(a);
    expect(gw.calls()).toBe(calls);
    expect(await refundsOf(receiptNum)).toMatchObject([{ actor: 'console:user-42', amount_minor: 400 }]);
    await expect(refundPayment(h.deps, who, { ...ask, amountMinor: 500 })).rejects.toMatchObject({
      status: 409,
      code: 'DUPLICATE_TRANSACTION',
    });
  });

  it('validation: reason required, amount > 0 with ≤ 2 decimals, unknown fields named', async () => {
    const receiptNum = await pay();
    const r = await h.request(
      'POST',
      '/v1/External/RefundPayment',
      { orgGUID: h.org.orgGuid, receiptNum, amount: 1.234, uniqueTransactionId: uid(), refundAll: true },
      keyAuth(h),
    );
    expect(r.status).toBe(400);
    const fields = r.body.error.fields.map((f: { field: string }) => f.field);
    expect(fields).toEqual(expect.arrayContaining(['refundAll', 'amount', 'reason']));
    expect((await refund(receiptNum, { amount: 0 })).status).toBe(400);
    expect((await refund(receiptNum, { reason: '  ' })).status).toBe(400);
  });

  it('an answer lost after the refund: Pending (REFUND_PENDING), its amount reserved; recovery records it once; the retry answers it', async () => {
    const receiptNum = await pay({ amount: 25 });
    gw.fault(1500, 'lost');
    const id = uid();
    const r = await refund(receiptNum, { amount: 15, uniqueTransactionId: id });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      paymentStatus: 'Success',
      refundStatus: 'Pending',
      remainingAmount: 10,
      error: { errorCode: 'REFUND_PENDING' },
    });
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Success', refunded_minor: 0 });
    // The pending 15 is reserved: 11 more is too much, and the payment cannot be voided meanwhile.
    const over = await refund(receiptNum, { amount: 11 });
    expect(over.body.error.errorCode).toBe('REFUND_EXCEEDS_REMAINING');
    const v = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum },
      keyAuth(h),
    );
    expect(v.status).toBe(409);
    // The same request meanwhile: still pending, nothing sent again.
    const calls = gw.calls();
    expect((await refund(receiptNum, { amount: 15, uniqueTransactionId: id })).body.refundStatus).toBe(
      'Pending',
    );
    expect(gw.calls()).toBe(calls);
    gw.fault(1500, null);
    await recover();
    expect(await paymentOf(receiptNum)).toEqual({ status: 'PartiallyRefunded', refunded_minor: 1500 });
    expect(await voidEvents(receiptNum)).toHaveLength(1);
    const done = await refund(receiptNum, { amount: 15, uniqueTransactionId: id });
    expect(done.body).toMatchObject({
      refundStatus: 'Succeeded',
      paymentStatus: 'PartiallyRefunded',
      refundedAmount: 15,
    });
    expect(gw.calls()).toBe(calls);
    // Recovery again: nothing left to do, nothing doubled.
    await recover();
    expect(await paymentOf(receiptNum)).toEqual({ status: 'PartiallyRefunded', refunded_minor: 1500 });
    expect(await refundsOf(receiptNum)).toMatchObject([{ status: 'succeeded', amount_minor: 1500 }]);
  });

  it('a refund claimed by a process that died mid-call (left sending): recovery waits for its lease, then records it once', async () => {
    const receiptNum = await pay({ amount: 12 });
    gw.fault(1200, 'lost');
    const id = uid();
    expect((await refund(receiptNum, { uniqueTransactionId: id })).body.refundStatus).toBe('Pending');
    gw.fault(1200, null);
    // What a killed process leaves: the claim, sent, never marked in doubt; its lease still running.
    await h.db.query(
      `UPDATE refunds SET gateway_state = 'sending', recovery_after = $2 WHERE org_id = $1 AND unique_transaction_id = $3`,
      [orgId, new Date(h.clock.now.getTime() + 60_000).toISOString(), id],
    );
    const calls = gw.calls();
    await paymentRecovery(h.deps).drain();
    expect(await refundsOf(receiptNum)).toMatchObject([{ status: 'pending' }]);
    expect((await h.deps.metrics.refundsPending.get()).values[0]?.value).toBe(1);
    await recover();
    expect(await refundsOf(receiptNum)).toMatchObject([{ status: 'succeeded', amount_minor: 1200 }]);
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Refunded', refunded_minor: 1200 });
    expect(gw.calls()).toBe(calls);
    expect(await voidEvents(receiptNum)).toHaveLength(1);
  });

  it('a refund that hung and never reached the gateway: recovery finds no record and releases it; the same request then refunds once', async () => {
    const receiptNum = await pay({ amount: 9 });
    gw.fault(900, 'timeout');
    const id = uid();
    const r = await refund(receiptNum, { uniqueTransactionId: id });
    expect(r.body.refundStatus).toBe('Pending');
    gw.fault(900, null);
    await recover();
    expect(await refundsOf(receiptNum)).toEqual([]);
    expect(await paymentOf(receiptNum)).toEqual({ status: 'Success', refunded_minor: 0 });
    const again = await refund(receiptNum, { uniqueTransactionId: id });
    expect(again.body).toMatchObject({ refundStatus: 'Succeeded', paymentStatus: 'Refunded' });
  });

  it('an unreachable gateway: 503 GATEWAY_UNAVAILABLE, nothing recorded; the same id may be sent again', async () => {
    const receiptNum = await pay({ amount: 8 });
    gw.fault(800, 'unreachable');
    const id = uid();
    const r = await refund(receiptNum, { uniqueTransactionId: id });
    expect(r.status).toBe(503);
    expect(r.body.error.errorCode).toBe('GATEWAY_UNAVAILABLE');
    expect(await refundsOf(receiptNum)).toEqual([]);
    gw.fault(800, null);
    expect((await refund(receiptNum, { uniqueTransactionId: id })).body.paymentStatus).toBe('Refunded');
  });

  it('a sandbox key cannot refund a live payment; charity cards are refused (REFUND_NOT_SUPPORTED)', async () => {
    const charity = await pay({ paymentMethodId: 'Provider_1', card: { ccNum: '6001000000000001' } });
    const c = await refund(charity);
    expect(c.status).toBe(409);
    expect(c.body.error.errorCode).toBe('REFUND_NOT_SUPPORTED');
    expect(await refundsOf(charity)).toEqual([]);
    const prod = await createApiKey(h.db, h.org.orgGuid, false, 'live');
    const receiptNum = await pay();
    const r = await refund(receiptNum, {}, { apikey: prod.apiKey });
    expect(r.status).toBe(409);
    expect(r.body.error.errorCode).toBe('GATEWAY_NOT_CONFIGURED');
  });

  it('the read API: statuses, refunded amounts, the refunds on the detail; totals count refunds and the net', async () => {
    const day = '2026-11-25T12:00:00.000Z';
    h.clock.set(day);
    const a = await pay({ amount: 10 });
    const b = await pay({ amount: 20 });
    await refund(a, { amount: 4, reason: 'partly' });
    await refund(b, { reason: 'all' });
    gw.decline(100, 'Declined');
    await refund(a, { amount: 1, reason: 'declined one' });
    const detail = await h.request('GET', `/v1/External/Payments/${a}`, undefined, keyAuth(h));
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ status: 'PartiallyRefunded', refundedAmount: 4, refundedMinor: 400 });
    expect(detail.body.refunds).toMatchObject([
      { status: 'succeeded', amount: 4, amountMinor: 400, reason: 'partly', errorCode: null },
      { status: 'failed', amountMinor: 100, reason: 'declined one', errorCode: 'REFUND_DECLINED' },
    ]);
    expect(detail.body.refunds[0].actor).toMatch(/^apiKey:/);
    const list = await h.request('GET', '/v1/External/Payments?status=Refunded', undefined, keyAuth(h));
    expect(list.body.payments.map((p: { receiptNum: string }) => p.receiptNum)).toContain(b);
    const csv = await h.request('GET', `/v1/External/Payments?q=${a}`, undefined, {
      ...keyAuth(h),
      accept: 'text/csv',
    });
    const [head, line] = String(csv.body)
      .replace(/^\uFEFF/, '')
      .split('\r\n');
    const col = head!.split(',').indexOf('refundedAmount');
    expect(col).toBeGreaterThan(0);
    expect(line!.split(',')[col]).toBe('4.00');
    // Totals over a range holding only a and b.
    const t = await h.request(
      'GET',
      '/v1/External/Reports/Totals?from=2026-11-25T11:59:00Z&to=2026-11-25T12:01:00Z&groupBy=currency',
      undefined,
      keyAuth(h),
    );
    expect(t.status, JSON.stringify(t.body)).toBe(200);
    expect(t.body.totals).toEqual([
      expect.objectContaining({
        currency: 'USD',
        succeeded: { count: 2, amount: 30, amountMinor: 3000 },
        refunded: { count: 2, amount: 24, amountMinor: 2400 },
        net: { amount: 6, amountMinor: 600 },
      }),
    ]);
  });

  it('through Sola (the emulator over loopback HTTP): cc:refund with the charge’s xRefNum and xAmount; check:refund for ACH', async () => {
    const form = await createSource(h.db, h.org.orgGuid, 'Live form', 'external', false);
    const key = await createApiKey(h.db, h.org.orgGuid, false, 'live back office');
    const live = async (over: Record<string, unknown>) => {
      const r = await h.request('POST', '/v1/External/Charge', chargeBody(h, over), {
        authorization: form.sourceGuid,
      });
      expect(r.body.paymentStatus, JSON.stringify(r.body)).toBe('Success');
      const [row] = await h.db.query<{ gateway_name: string; gateway_ref: string }>(
        'SELECT gateway_name, gateway_ref FROM payments WHERE receipt_num = $1',
        [r.body.receiptNum],
      );
      expect(row!.gateway_name).toBe('Sola');
      return { receiptNum: r.body.receiptNum as string, ref: row!.gateway_ref };
    };
    const card = await live({ amount: 60 });
    const r = await refund(card.receiptNum, { amount: 24.5 }, { apikey: key.apiKey });
    expect(r.body).toMatchObject({
      paymentStatus: 'PartiallyRefunded',
      refundStatus: 'Succeeded',
      remainingAmount: 35.5,
    });
    const sent = emu.received().filter((x) => x.fields.xcommand === 'cc:refund');
    expect(sent).toHaveLength(1);
    expect(sent[0]!.fields).toMatchObject({ xrefnum: card.ref, xamount: '24.50' });
    expect(sent[0]!.fields.xinvoice).toMatch(/^[A-Za-z0-9_-]{20}$/);
    const [rf] = await h.db.query<{ gateway_ref: string }>(
      `SELECT r.gateway_ref FROM refunds r JOIN payments p ON p.id = r.payment_id WHERE p.receipt_num = $1`,
      [card.receiptNum],
    );
    expect(rf!.gateway_ref).toBe(emu.refunds().at(-1)!.refNum);
    // More than Sola would allow is refused here first: nothing more is sent.
    expect((await refund(card.receiptNum, { amount: 35.51 }, { apikey: key.apiKey })).status).toBe(409);
    expect(emu.received().filter((x) => x.fields.xcommand === 'cc:refund')).toHaveLength(1);

    const bank = await live({
      amount: 15,
      paymentMethodId: 'ACH',
      card: undefined,
      bankAccount: {
        routingNum: '011000015',
        accountNum: '000123456789',
        nameOnAccount: 'Dana Donor',
        accountType: 'Checking',
      },
    });
    const b = await refund(bank.receiptNum, {}, { apikey: key.apiKey });
    expect(b.body).toMatchObject({ paymentStatus: 'Refunded', refundAmount: 15 });
    expect(emu.received().at(-1)!.fields).toMatchObject({
      xcommand: 'check:refund',
      xrefnum: bank.ref,
      xamount: '15.00',
    });
    // A sandbox key cannot refund a live payment.
    const s = await refund(card.receiptNum, { amount: 1 });
    expect(s.status).toBe(409);
    expect(s.body.error.errorCode).toBe('GATEWAY_NOT_CONFIGURED');
  });

  it('each refund queues a corrected receipt to where the receipt went, which tells the refund', async () => {
    const set = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      receipts: { legalName: 'Congregation Chesed Inc.', address: '12 Main Street', taxId: '12-3456789' },
    });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const receiptNum = await pay({
      amount: 36,
      donor: { firstName: 'Moshe', lastName: 'Cohen', email: 'moshe@example.org' },
    });
    const kinds = async () =>
      (
        await h.db.query<{ kind: string; refund_id: string | null }>(
          `SELECT d.kind, d.refund_id FROM receipt_deliveries d JOIN payments p ON p.id = d.payment_id
           WHERE p.receipt_num = $1 ORDER BY d.id`,
          [receiptNum],
        )
      ).map((d) => `${d.kind}${d.refund_id === null ? '' : '+refund'}`);
    expect(await kinds()).toEqual(['receipt']);
    await refund(receiptNum, { amount: 10 });
    await refund(receiptNum);
    expect(await kinds()).toEqual(['receipt', 'correction+refund', 'correction+refund']);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { receipts: { enabled: false } });

    const facts = {
      receiptNum,
      status: 'PartiallyRefunded' as const,
      amountMinor: 3600,
      refundedMinor: 1000,
      refundedAt: new Date('2026-11-24T12:00:00Z'),
      currency: 'USD',
      method: 'Credit_Card',
      brand: 'Visa',
      last4: '4242',
      paidAt: new Date('2026-11-20T12:00:00Z'),
      voidedAt: null,
      note: null,
      isAnonymous: false,
      donor: null,
      campaign: null,
      reasons: [],
      schedule: null,
    };
    const org = (await findOrgById(h.db, orgId))!;
    const part = receiptDocument(facts, org, 'en', 'correction');
    expect(part.notice).toMatch(/\$10\.00 of this donation was refunded on .*the donation is now \$26\.00/);
    expect(part.statement).toHaveLength(1);
    expect(part.rows.map((r) => r.label)).toEqual(
      expect.arrayContaining(['Refunded', 'Donation after refunds']),
    );
    const full = receiptDocument(
      { ...facts, status: 'Refunded', refundedMinor: 3600 },
      org,
      'he',
      'correction',
    );
    expect(full.notice).toContain('הוחזרה במלואה');
    expect(full.statement).toEqual([]);
  });
});
