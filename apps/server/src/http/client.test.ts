/**
 * The typed client against the real server over loopback HTTP: every operation of the document
 * once, then idempotency keys and retries (a lost answer, a refused connection, rate limits, an
 * answer that must not be retried).
 */

import { createKupahClient, type KupahClient, retryAfterMs } from '@kupah/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sealedOp } from '../testing/device-client.ts';
import { createHarness, type Harness } from '../testing/harness.ts';
import { OPERATION_IDS } from './openapi-document.ts';

const card = { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' };

describe('typed client against the real server', () => {
  let h: Harness;
  let base: string;
  let api: KupahClient;
  let form: KupahClient;
  const called = new Set<string>();
  /** Record which operation each request was, by the document's operationId. */
  const recording = (input: Request) => {
    const path = new URL(input.url).pathname;
    for (const [key, id] of Object.entries(OPERATION_IDS)) {
      const [method, template] = key.split(' ') as [string, string];
      const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
      if (method.toUpperCase() === input.method && re.test(path)) called.add(id);
    }
    return fetch(input);
  };

  beforeAll(async () => {
    h = await createHarness('pglite');
    h.clock.set('2026-11-23T14:00:00Z');
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      scheduleMode: 'Internal',
      rateLimit: { perSecond: 100_000, burst: 100_000 },
      receipts: { legalName: 'Test Org Inc.', taxId: '12-3456789' },
    });
    base = await h.listen();
    api = createKupahClient({ baseUrl: base, apiKey: h.org.apiKey, fetch: recording });
    form = createKupahClient({ baseUrl: base, sourceGuid: h.org.sourceGuid, fetch: recording });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('runs every operation of the OpenAPI document, typed end to end', async () => {
    const org = h.org.orgGuid;
    const donor = await api.PUT('/V1/External/SaveDonor', {
      body: { orgGuid: org, donorID: '', firstName: 'Moshe', lastName: 'Cohen' },
    });
    expect(donor.error).toBeUndefined();
    const donorId = donor.data!.donorId;
    const collector = await api.PUT('/V1/External/SaveCollector', {
      body: { orgGuid: org, collectorID: '', firstName: 'Yossi', lastName: 'Katz' },
    });
    expect(collector.data?.collectorId).toMatch(/^C\d+$/);
    const reason = await api.PUT('/V1/External/SaveReason', {
      body: { orgGuid: org, reasonNumber: 0, reasonName: 'Kiddush' },
    });
    expect(reason.data?.reasonNumber).toBeGreaterThan(0);
    const campaign = await api.PUT('/V1/External/SaveCampaign', {
      body: { orgGuid: org, campaignNumber: 0, campaignName: 'Building Fund' },
    });
    expect(campaign.data?.campaignNumber).toBeGreaterThan(0);

    // No uniqueTransactionId: the client makes one.
    const charged = await form.charge({
      orgGUID: org,
      amount: 18,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      card,
      donor: { donorId },
    });
    expect(charged.data?.paymentStatus).toBe('Success');
    const receiptNum = charged.data!.receiptNum!;
    // A refund (its uniqueTransactionId made by the client), then the rest, then a void is refused.
    const toRefund = (
      await form.charge({ orgGUID: org, amount: 30, currency: 'USD', paymentMethodId: 'Credit_Card', card })
    ).data!.receiptNum!;
    const refunded = await api.refundPayment({
      orgGUID: org,
      receiptNum: toRefund,
      amount: 12.5,
      reason: 'overpaid',
    });
    expect(refunded.data).toMatchObject({
      paymentStatus: 'PartiallyRefunded',
      refundStatus: 'Succeeded',
      refundAmount: 12.5,
      remainingAmount: 17.5,
    });
    const rest = await api.POST('/v1/External/RefundPayment', {
      body: {
        orgGUID: org,
        receiptNum: toRefund,
        reason: 'the rest',
        uniqueTransactionId: crypto.randomUUID(),
      },
    });
    expect(rest.data?.paymentStatus).toBe('Refunded');
    const voided = await api.POST('/v1/External/VoidPayment', { body: { orgGUID: org, receiptNum } });
    expect(voided.data?.paymentStatus).toBe('Voided');

    const terms = {
      orgGUID: org,
      currency: 'USD' as const,
      paymentMethodId: 'Credit_Card' as const,
      card,
      scheduleDetails: {
        startDate: '2026-11-23',
        frequencyID: 'Monthly' as const,
        totalPaymentsCount: 3,
        amountPerPayment: 10,
      },
    };
    const preview = await form.POST('/v1/External/SchedulePreview', { body: terms });
    expect(preview.data?.instalments).toHaveLength(3);
    expect(preview.error).toBeUndefined();
    const scheduled = await form.schedulePayment(terms);
    expect(scheduled.data?.paymentStatus, JSON.stringify(scheduled.error)).toBe('Success');
    const scheduleNum = scheduled.data!.scheduleNum!;
    const list = await api.GET('/v1/External/Schedules', { params: { query: { orgGuid: org } } });
    expect(list.data?.schedules.map((s) => s.scheduleNum)).toContain(scheduleNum);
    const path = { params: { path: { scheduleNum } }, body: { orgGuid: org } };
    expect((await api.POST('/v1/External/Schedules/{scheduleNum}/Pause', path)).data?.status).toBe('paused');
    expect((await api.POST('/v1/External/Schedules/{scheduleNum}/Resume', path)).data?.status).toBe('active');
    const newCard = await api.PUT('/v1/External/Schedules/{scheduleNum}/PaymentMethod', {
      params: { path: { scheduleNum } },
      body: { orgGuid: org, paymentMethodId: 'Credit_Card', card: { ...card, ccNum: '5555555555554444' } },
    });
    expect(newCard.data?.last4Digits).toBe('4444');
    expect((await api.POST('/v1/External/Schedules/{scheduleNum}/Cancel', path)).data?.status).toBe(
      'cancelled',
    );

    // Device: paired with a code the organisation's admin made, then push and pull as a terminal.
    const created = await h.admin('POST', `/orgs/${org}/devices`, { name: 'Kiosk', sandbox: true });
    const anonymous = createKupahClient({ baseUrl: base, fetch: recording });
    const paired = await anonymous.POST('/v1/Device/Pair', {
      body: { pairingCode: created.body.pairingCode, appVersion: 'client-test' },
    });
    expect(paired.data?.credential).toBeTruthy();
    const device = createKupahClient({
      baseUrl: base,
      sourceGuid: paired.data!.credential,
      fetch: recording,
    });
    const op = await sealedOp(
      { deviceId: paired.data!.deviceId, key: paired.data!.encryptionKey },
      'charge',
      { amount: 5, currency: 'USD', paymentMethodId: 'Credit_Card', card },
      { deviceCreatedDate: h.clock.now.toISOString() },
    );
    const pushed = await device.POST('/v1/Device/Sync/Push', {
      body: {
        deviceId: paired.data!.deviceId,
        appVersion: 'client-test',
        queue: { depth: 1, totalMinor: 500 },
        operations: [op],
      },
    });
    expect(pushed.data?.results[0]?.status).toBe('Success');
    const pulled = await device.GET('/v1/Device/Sync/Pull', { params: { query: {} } });
    expect(pulled.error).toBeUndefined();
    const closed = await device.POST('/v1/Device/Shift/Close', {
      body: {
        deviceId: paired.data!.deviceId,
        closeId: crypto.randomUUID(),
        openedAt: '2026-11-23T00:00:00.000Z',
        closedAt: '2026-11-24T00:00:00.000Z',
        totals: {
          succeeded: [{ method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 500 }],
          voided: [],
          declined: [],
        },
      },
    });
    expect(closed.data?.server.succeeded).toEqual([
      { method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 500 },
    ]);
    const shifts = await api.GET('/v1/External/Reports/Shifts', { params: { query: {} } });
    expect(shifts.data?.shifts).toHaveLength(1);

    // The read API.
    const payments = await api.GET('/v1/External/Payments', { params: { query: { status: 'Voided' } } });
    expect(payments.data?.payments.map((p) => p.receiptNum)).toEqual([receiptNum]);
    const one = await api.GET('/v1/External/Payments/{receiptNum}', { params: { path: { receiptNum } } });
    expect(one.data?.donor?.accountNum).toBe(donorId);
    const totals = await api.GET('/v1/External/Reports/Totals', {
      params: { query: { from: '2026-11-01', to: '2026-11-30', groupBy: 'currency' } },
    });
    expect(totals.data?.totals[0]?.voided.amountMinor).toBe(1800);
    const found = await api.GET('/v1/External/Donors', { params: { query: { search: 'cohen' } } });
    expect(found.data?.donors.map((d) => d.donorId)).toEqual([donorId]);
    const history = await api.GET('/v1/External/Donors/{accountNum}', {
      params: { path: { accountNum: donorId } },
    });
    expect(history.data?.payments).toHaveLength(1);

    // Receipts: the PDF, a copy by e-mail, the deliveries, a year-end statement, a device's copy.
    const pdf = await api.GET('/v1/External/Payments/{receiptNum}/Receipt', {
      params: { path: { receiptNum } },
      parseAs: 'arrayBuffer',
    });
    expect(
      Buffer.from(pdf.data as ArrayBuffer)
        .subarray(0, 5)
        .toString(),
    ).toBe('%PDF-');
    const copy = await api.POST('/v1/External/Payments/{receiptNum}/Receipt/Send', {
      params: { path: { receiptNum } },
      body: { orgGuid: org, email: 'donor@example.org' },
    });
    expect(copy.data?.delivery.kind).toBe('copy');
    const sent = await api.GET('/v1/External/Receipts', { params: { query: { limit: 10 } } });
    expect(sent.data?.deliveries.map((d) => d.deliveryId)).toContain(copy.data!.delivery.deliveryId);
    const statement = await api.GET('/v1/External/Donors/{accountNum}/Statements/{year}', {
      params: { path: { accountNum: donorId, year: 2026 } },
      parseAs: 'arrayBuffer',
    });
    expect(statement.response.headers.get('content-type')).toBe('application/pdf');
    const deviceCopy = await device.POST('/v1/Device/Receipt/Send', {
      body: { receiptNum: pushed.data!.results[0]!.receiptNum!, email: 'walkin@example.org' },
    });
    expect(deviceCopy.data?.delivery.status).toBe('pending');

    // A typed error answer.
    const bad = await api.GET('/v1/External/Payments', { params: { query: { limit: 0 } } });
    expect(bad.response.status).toBe(400);
    expect(bad.error?.error.fields?.[0]?.field).toBe('limit');

    expect([...called].sort()).toEqual(Object.values(OPERATION_IDS).sort());
  });

  it('a lost answer is retried under the same uniqueTransactionId: one payment, the first answer', async () => {
    let sent = 0;
    const lossy = createKupahClient({
      baseUrl: base,
      sourceGuid: h.org.sourceGuid,
      sleep: async () => {},
      fetch: async (req) => {
        sent++;
        const res = await fetch(req);
        if (sent === 1) throw new TypeError('fetch failed (connection reset after the server answered)');
        return res;
      },
    });
    const r = await lossy.charge({
      orgGUID: h.org.orgGuid,
      amount: 7,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      card,
    });
    expect(sent).toBe(2);
    expect(r.data?.paymentStatus).toBe('Success');
    const rows = await h.db.query<{ n: string }>(
      "SELECT count(*) AS n FROM payments WHERE amount_minor = 700 AND unique_transaction_id ~ '^[0-9a-f-]{36}$'",
    );
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it('a caller-given uniqueTransactionId is kept; a refused connection is retried; a 400 is not', async () => {
    const deadThenAlive = (failures: number) => {
      let n = 0;
      return {
        calls: () => n,
        fetch: async (req: Request) => {
          n++;
          if (n <= failures) throw new TypeError('fetch failed (ECONNREFUSED)');
          return fetch(req);
        },
      };
    };
    const flaky = deadThenAlive(2);
    const c = createKupahClient({
      baseUrl: base,
      sourceGuid: h.org.sourceGuid,
      sleep: async () => {},
      fetch: flaky.fetch,
    });
    const r = await c.POST('/v1/External/Charge', {
      body: {
        orgGUID: h.org.orgGuid,
        amount: 9,
        currency: 'USD',
        paymentMethodId: 'Credit_Card',
        card,
        uniqueTransactionId: 'mine-1',
      },
    });
    expect(flaky.calls()).toBe(3);
    expect(r.data?.paymentStatus).toBe('Success');
    const [row] = await h.db.query<{ unique_transaction_id: string }>(
      'SELECT unique_transaction_id FROM payments WHERE receipt_num = $1',
      [r.data!.receiptNum],
    );
    expect(row?.unique_transaction_id).toBe('mine-1');

    // Never more attempts than allowed.
    const down = deadThenAlive(100);
    const d = createKupahClient({
      baseUrl: base,
      apiKey: h.org.apiKey,
      sleep: async () => {},
      retry: { attempts: 3 },
      fetch: down.fetch,
    });
    await expect(d.GET('/v1/External/Payments')).rejects.toThrow(/ECONNREFUSED/);
    expect(down.calls()).toBe(3);

    // A PUT that may create a record is not sent twice after a network error.
    const once = deadThenAlive(1);
    const s = createKupahClient({
      baseUrl: base,
      apiKey: h.org.apiKey,
      sleep: async () => {},
      fetch: once.fetch,
    });
    await expect(
      s.PUT('/V1/External/SaveDonor', {
        body: { orgGuid: h.org.orgGuid, donorID: '', firstName: 'A', lastName: 'B' },
      }),
    ).rejects.toThrow();
    expect(once.calls()).toBe(1);

    // A 400 is answered at once.
    let n = 0;
    const v = createKupahClient({
      baseUrl: base,
      sourceGuid: h.org.sourceGuid,
      sleep: async () => {},
      fetch: (req) => {
        n++;
        return fetch(req);
      },
    });
    const bad = await v.charge({
      orgGUID: h.org.orgGuid,
      amount: -1,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      card,
    });
    expect(bad.response.status).toBe(400);
    expect(n).toBe(1);
  });

  it('429 RATE_LIMITED waits Retry-After and tries again; a wait longer than allowed answers the 429', async () => {
    // The rate limit runs on the database's clock: the waits are real (about a second each). One
    // token a second, so that a loaded machine's slow requests cannot refill the bucket in between.
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { rateLimit: { perSecond: 1, burst: 2 } });
    try {
      const waits: number[] = [];
      const c = createKupahClient({
        baseUrl: base,
        apiKey: h.org.apiKey,
        onRetry: ({ delayMs, reason }) => {
          expect(reason).toBe('RATE_LIMITED');
          waits.push(delayMs);
        },
      });
      const answers = [];
      for (let i = 0; i < 5; i++) answers.push((await c.GET('/v1/External/Payments')).response.status);
      expect(answers).toEqual([200, 200, 200, 200, 200]);
      expect(waits.length).toBeGreaterThan(0);
      expect(waits.every((ms) => ms >= 1000)).toBe(true);

      const impatient = createKupahClient({
        baseUrl: base,
        apiKey: h.org.apiKey,
        retry: { maxDelayMs: 10 },
        sleep: async () => {},
      });
      const statuses = [];
      for (let i = 0; i < 4; i++)
        statuses.push((await impatient.GET('/v1/External/Payments')).response.status);
      expect(statuses).toContain(429);
    } finally {
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        rateLimit: { perSecond: 100_000, burst: 100_000 },
      });
    }
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs('Wed, 25 Nov 2026 10:00:05 GMT', Date.parse('2026-11-25T10:00:00Z'))).toBe(5000);
    expect(retryAfterMs(null)).toBeNull();
    expect(retryAfterMs('soon')).toBeNull();
  });
});
