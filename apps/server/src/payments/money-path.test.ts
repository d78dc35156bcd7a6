/**
 * The money path in three steps (claim → gateway outside any transaction → record), against a
 * sandbox gateway that can be slow, hang, lose its answer or be unreachable.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Gateway } from '../gateway/gateway.ts';
import { type SandboxFault, sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { recurringScheduler } from '../schedules/scheduler.ts';
import { pairTestDevice, sealedOp } from '../testing/device-client.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { paymentRecovery } from './recovery.ts';

/** The sandbox with a fault chosen per idempotency key, a gate that holds calls, and call counts. */
function scriptedGateway() {
  const faults = new Map<string, SandboxFault>();
  let faultWhere: ((key: string) => SandboxFault | null) | null = null;
  const calls = new Map<string, number>();
  let gate: Promise<void> | null = null;
  let open: (() => void) | null = null;
  const inner = sandboxGateway({
    profile: { faultFor: (_op, key) => faults.get(key) ?? faultWhere?.(key) ?? null },
  });
  const gateway: Gateway = {
    ...inner,
    name: inner.name,
    async authorize(req, opts) {
      calls.set(req.idempotencyKey, (calls.get(req.idempotencyKey) ?? 0) + 1);
      if (gate) await gate;
      return inner.authorize(req, opts);
    },
  };
  return {
    gateway,
    fault: (key: string, f: SandboxFault | null) => (f ? faults.set(key, f) : faults.delete(key)),
    faultWhere: (pick: ((key: string) => SandboxFault | null) | null) => {
      faultWhere = pick;
    },
    calls: (key: string) => calls.get(key) ?? 0,
    hold() {
      gate = new Promise<void>((r) => {
        open = r;
      });
    },
    release() {
      open?.();
      gate = null;
    },
  };
}

describe.each(await testDatabases())('money path on %s', { timeout: 60_000 }, (kind) => {
  let h: Harness;
  let gw: ReturnType<typeof scriptedGateway>;
  beforeAll(async () => {
    gw = scriptedGateway();
    h = await createHarness(kind, {
      gateway: gw.gateway,
      calls: { timeoutMs: 2_500, waitForOutcomeMs: 1_000 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });
  beforeEach(() => {
    gw.release();
  });

  const keyOf = (body: Record<string, unknown>) => `${h.org.orgGuid}:${body.uniqueTransactionId}`;
  const charge = (body: Record<string, unknown>) =>
    h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
  const paymentRows = (uid: string) =>
    h.db.query<{
      status: string;
      receipt_num: string;
      gateway_state: string | null;
      error_code: string | null;
    }>(
      'SELECT status, receipt_num, gateway_state, error_code FROM payments WHERE unique_transaction_id = $1',
      [uid],
    );
  const webhookEvents = async (receiptNum: string) =>
    (
      await h.db.query<{ payload: string }>("SELECT payload FROM outbox_events WHERE event_type = 'payment'")
    ).filter((e) => JSON.parse(e.payload).paymentNumber === receiptNum).length;
  /** Wait until the charge of `body` has reached the gateway. */
  const atGateway = async (body: Record<string, unknown>) => {
    for (let i = 0; i < 200 && gw.calls(keyOf(body)) === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(gw.calls(keyOf(body))).toBe(1);
  };
  /** Move the clock past every lease, then let recovery resolve what is due. */
  const recover = async () => {
    h.clock.set(new Date(h.clock.now.getTime() + 120_000).toISOString());
    return paymentRecovery(h.deps).drain();
  };

  it('text that cannot be stored (a lone surrogate) is a 400 naming the field, before the gateway is called', async () => {
    const body = chargeBody(h, { deviceInfo: { deviceName: 'd\ud800' } });
    const r = await charge(body);
    expect(r.status).toBe(400);
    expect(r.body.error.fields.map((f: { field: string }) => f.field)).toContain('deviceInfo.deviceName');
    expect(gw.calls(keyOf(body))).toBe(0);
    expect(await paymentRows(String(body.uniqueTransactionId))).toHaveLength(0);
  });

  it('no transaction or connection is held while the gateway thinks: other requests answer meanwhile', async () => {
    gw.hold();
    const body = chargeBody(h);
    const pending = charge(body);
    await atGateway(body);
    const started = Date.now();
    const donor = await h.request(
      'PUT',
      '/V1/External/SaveDonor',
      { orgGuid: h.org.orgGuid, donorID: '', firstName: 'Rivka', lastName: 'Adler' },
      keyAuth(h),
    );
    const ready = await h.request('GET', '/readyz');
    expect(donor.status).toBe(200);
    expect(ready.status).toBe(200);
    expect(Date.now() - started).toBeLessThan(900); // far below the gateway's time-out: nothing waited on it
    // Meanwhile the payment is claimed and visible as Pending, its request being sent.
    const [row] = await paymentRows(String(body.uniqueTransactionId));
    expect(row).toMatchObject({ status: 'Pending', gateway_state: 'sending' });
    gw.release();
    expect((await pending).body.paymentStatus).toBe('Success');
  });

  it('an answer lost after the charge: Pending (PAYMENT_PENDING), never charged twice, then recovered with its webhook', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { webhooksAllSources: true });
    const body = chargeBody(h);
    gw.fault(keyOf(body), 'lost');
    const first = await charge(body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ paymentStatus: 'Error', error: { errorCode: 'PAYMENT_PENDING' } });
    const receipt = first.body.receiptNum;
    expect(receipt).toMatch(/^R\d+$/);
    // A retry while it is in doubt: the same pending answer, and no second call to the gateway.
    const again = await charge(body);
    expect(again.body).toEqual(first.body);
    expect(gw.calls(keyOf(body))).toBe(1);
    expect(await webhookEvents(receipt)).toBe(0);

    expect(await recover()).toBeGreaterThanOrEqual(1);
    const [row] = await paymentRows(String(body.uniqueTransactionId));
    expect(row).toMatchObject({ status: 'Success', receipt_num: receipt, gateway_state: null });
    expect(await webhookEvents(receipt)).toBe(1);
    const metrics = await h.adminRequest('GET', '/metrics');
    expect(String(metrics.body)).toMatch(/kupah_payments_recovered_total\{status="Success"\} [1-9]/);
    const resolved = await charge(body);
    expect(resolved.body).toMatchObject({
      paymentStatus: 'Success',
      receiptNum: receipt,
      error: { errorCode: null },
    });
    expect(gw.calls(keyOf(body))).toBe(1);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { webhooksAllSources: false });
  });

  it('a time-out the gateway never processed: recovery finds no record and frees the id; a retry charges once', async () => {
    const body = chargeBody(h);
    gw.fault(keyOf(body), 'timeout');
    const first = await charge(body);
    expect(first.body.error.errorCode).toBe('PAYMENT_PENDING');
    expect(await charge(body)).toMatchObject({ body: { error: { errorCode: 'PAYMENT_PENDING' } } });
    expect(gw.calls(keyOf(body))).toBe(1);
    await recover();
    // Nothing was charged: the claim is gone, and the same request is charged (once) when sent again.
    expect(await paymentRows(String(body.uniqueTransactionId))).toHaveLength(0);
    gw.fault(keyOf(body), null);
    const after = await charge(body);
    expect(after.body).toMatchObject({ paymentStatus: 'Success', error: { errorCode: null } });
    expect(gw.calls(keyOf(body))).toBe(2);
    const rows = await paymentRows(String(body.uniqueTransactionId));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.status).toBe('Success');
    expect((await charge(body)).body).toEqual(after.body);
  });

  it('an unreachable gateway charges nothing and frees the id: the same request succeeds later', async () => {
    const body = chargeBody(h);
    gw.fault(keyOf(body), 'unreachable');
    const first = await charge(body);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      receiptNum: null,
      paymentStatus: 'Error',
      error: { errorCode: 'GATEWAY_UNAVAILABLE' },
    });
    expect(await paymentRows(String(body.uniqueTransactionId))).toHaveLength(0);
    gw.fault(keyOf(body), null);
    const second = await charge(body);
    expect(second.body.paymentStatus).toBe('Success');
    expect(await paymentRows(String(body.uniqueTransactionId))).toHaveLength(1);
  });

  it('a second request with the same id while the first is at the gateway waits and answers the same', async () => {
    gw.hold();
    const body = chargeBody(h);
    const a = charge(body);
    await atGateway(body);
    const b = charge(body);
    await new Promise((r) => setTimeout(r, 100));
    gw.release();
    const [ra, rb] = await Promise.all([a, b]);
    expect(ra.body.paymentStatus).toBe('Success');
    expect(rb.body).toEqual(ra.body);
    expect(gw.calls(keyOf(body))).toBe(1);
  });

  it('…and answers 409 REQUEST_IN_PROGRESS with Retry-After when the first takes longer than the wait', async () => {
    gw.hold();
    const body = chargeBody(h);
    const a = charge(body);
    await atGateway(body);
    const b = await charge(body);
    expect(b.status).toBe(409);
    expect(b.body.error.errorCode).toBe('REQUEST_IN_PROGRESS');
    expect(Number(b.headers.get('retry-after'))).toBeGreaterThan(0);
    gw.release();
    await a;
    expect(gw.calls(keyOf(body))).toBe(1);
  });

  it('uniqueTransactionId is unique forever: after its idempotency record is purged, a reuse is 409, not a charge', async () => {
    const body = chargeBody(h);
    expect((await charge(body)).body.paymentStatus).toBe('Success');
    await h.db.query('DELETE FROM idempotency_keys WHERE key = $1', [body.uniqueTransactionId]);
    const reuse = await charge(body);
    expect(reuse.status).toBe(409);
    expect(reuse.body.error.errorCode).toBe('DUPLICATE_TRANSACTION');
    expect(await paymentRows(String(body.uniqueTransactionId))).toHaveLength(1);
    expect(gw.calls(keyOf(body))).toBe(1);
  });

  it('a device push answers PAYMENT_PENDING as retryable; the same op later answers the recovered receipt', async () => {
    const device = await pairTestDevice(h, 'Pending Kiosk');
    const op = await sealedOp(device, 'charge', {
      amount: 18,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
    });
    gw.fault(`${h.org.orgGuid}:${op.opId}`, 'lost');
    const first = await device.push([op]);
    expect(first.body.results[0]).toMatchObject({
      status: 'Error',
      retryable: true,
      error: { errorCode: 'PAYMENT_PENDING' },
    });
    await recover();
    const second = await device.push([op]);
    expect(second.body.results[0]).toMatchObject({ status: 'Success', retryable: false });
    expect(second.body.results[0].receiptNum).toBe(first.body.results[0].receiptNum);
    expect(gw.calls(`${h.org.orgGuid}:${op.opId}`)).toBe(1);
  });

  it('a schedule whose first payment is in doubt is created by recovery once the gateway confirms it', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Internal' });
    const uid = randomUUID();
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(h.clock.now);
    const body = {
      orgGUID: h.org.orgGuid,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      uniqueTransactionId: uid,
      card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
      scheduleDetails: {
        frequencyID: 'Monthly',
        startDate: today,
        totalPaymentsCount: 3,
        amountPerPayment: 5,
      },
    };
    gw.fault(`${h.org.orgGuid}:${uid}:1`, 'lost');
    const first = await h.request('POST', '/v1/External/SchedulePayment', body, keyAuth(h));
    expect(first.body).toMatchObject({ paymentStatus: 'Failed', error: { errorCode: 'PAYMENT_PENDING' } });
    const [s] = await h.db.query<{ status: string }>(
      'SELECT status FROM schedules WHERE unique_transaction_id = $1',
      [uid],
    );
    expect(s!.status).toBe('pending');
    await recover();
    const done = await h.request('POST', '/v1/External/SchedulePayment', body, keyAuth(h));
    expect(done.body).toMatchObject({ paymentStatus: 'Success', receiptNum: first.body.receiptNum });
    const instalments = await h.db.query<{ status: string }>(
      `SELECT i.status FROM schedule_instalments i JOIN schedules s ON s.id = i.schedule_id
        WHERE s.unique_transaction_id = $1 ORDER BY i.sequence`,
      [uid],
    );
    expect(instalments.map((i) => i.status)).toEqual(['charged', 'pending', 'pending']);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Integration' });
  });

  it('an instalment whose charge never reached the gateway (unreachable, or lost before it) is due again, then charged once', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Internal' });
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(h.clock.now);
    const uid = randomUUID();
    const made = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      {
        orgGUID: h.org.orgGuid,
        currency: 'USD',
        paymentMethodId: 'Credit_Card',
        uniqueTransactionId: uid,
        card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        scheduleDetails: {
          frequencyID: 'Daily',
          startDate: today,
          totalPaymentsCount: 3,
          amountPerPayment: 4,
        },
      },
      keyAuth(h),
    );
    expect(made.body.paymentStatus).toBe('Success');
    const tag = `:schedule:${made.body.scheduleNum}:`;
    const instalments = () =>
      h.db.query<{ status: string; attempts: number; payment_id: string | null }>(
        `SELECT i.status, i.attempts, i.payment_id FROM schedule_instalments i JOIN schedules s ON s.id = i.schedule_id
          WHERE s.unique_transaction_id = $1 ORDER BY i.sequence`,
        [uid],
      );
    const scheduler = recurringScheduler(h.deps);
    // Instalment 2: the gateway cannot be reached. Nothing charged, not an attempt, due again soon.
    gw.faultWhere((key) => (key.includes(`${tag}2:`) ? 'unreachable' : null));
    h.clock.set(new Date(h.clock.now.getTime() + 86_400_000).toISOString());
    await scheduler.drain();
    expect((await instalments())[1]).toMatchObject({ status: 'pending', attempts: 0, payment_id: null });
    // Then the call times out (nothing charged): Pending until recovery finds no record, then due again.
    gw.faultWhere((key) => (key.includes(`${tag}2:`) ? 'timeout' : null));
    h.clock.set(new Date(h.clock.now.getTime() + 10 * 60_000).toISOString());
    await scheduler.drain();
    expect((await instalments())[1]!.status).toBe('charging');
    gw.faultWhere(null);
    await recover();
    expect((await instalments())[1]).toMatchObject({ status: 'pending', payment_id: null });
    h.clock.set(new Date(h.clock.now.getTime() + 10 * 60_000).toISOString());
    await scheduler.drain();
    expect((await instalments())[1]!.status).toBe('charged');
    const successes = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM payments p JOIN schedules s ON s.id = p.schedule_id
        WHERE s.unique_transaction_id = $1 AND p.instalment_seq = 2 AND p.status = 'Success'`,
      [uid],
    );
    expect(successes[0]!.n).toBe(1);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Integration' });
  });

  it('two recovery workers at once resolve each pending payment exactly once', async () => {
    const bodies = Array.from({ length: 12 }, () => chargeBody(h));
    for (const b of bodies) gw.fault(keyOf(b), 'lost');
    await Promise.all(bodies.map((b) => charge(b)));
    h.clock.set(new Date(h.clock.now.getTime() + 120_000).toISOString());
    const before = await h.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM payments WHERE status = 'Pending'",
    );
    expect(before[0]!.n).toBeGreaterThanOrEqual(12);
    const [a, b] = await Promise.all([paymentRecovery(h.deps).drain(), paymentRecovery(h.deps).drain()]);
    expect(a + b).toBe(before[0]!.n);
    for (const body of bodies) {
      const rows = await paymentRows(String(body.uniqueTransactionId));
      expect(rows).toHaveLength(1);
      expect(rows[0]!.status).toBe('Success');
    }
  });
});
