/**
 * Internal and Gateway modes over a simulated year with a fake clock, on PGlite and PostgreSQL:
 * every instalment is charged exactly once, declines are retried then missed, cancellation,
 * pause and resume are honoured, a crash between the gateway's charge and the commit does not
 * charge twice, and two schedulers at once never charge one instalment twice.
 */
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Gateway } from '../gateway/gateway.ts';
import { staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { createMetrics } from '../http/metrics.ts';
import { paymentRecovery } from '../payments/recovery.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  PG_URL,
  testDatabases,
} from '../testing/harness.ts';
import { recurringScheduler } from './scheduler.ts';

const civil = (d: Date, tz = 'America/New_York') =>
  new Intl.DateTimeFormat('en-CA', { timeZone: tz }).format(d);

/** A gateway that counts real charges per idempotency key (the sandbox replays a key's first result). */
function countingGateway(inner: Gateway) {
  const charges = new Map<string, number>();
  const sent = new Map<string, number>();
  let crashOn: ((key: string) => boolean) | null = null; // told of every key the gateway charges
  const gateway: Gateway = {
    ...inner,
    name: inner.name,
    async authorize(req, opts) {
      sent.set(req.idempotencyKey, (sent.get(req.idempotencyKey) ?? 0) + 1);
      const r = await inner.authorize(req, opts);
      if (!charges.has(req.idempotencyKey) && r.status === 'Success') charges.set(req.idempotencyKey, 1);
      crashOn?.(req.idempotencyKey);
      return r;
    },
  };
  return {
    gateway,
    charges,
    calls: (key: string) => sent.get(key) ?? 0,
    crashAfter: (pred: (key: string) => boolean) => (crashOn = pred),
  };
}

describe.each(await testDatabases())('recurring schedules on %s', { timeout: 120_000 }, (kind) => {
  let h: Harness;
  let counting: ReturnType<typeof countingGateway>;
  beforeAll(async () => {
    counting = countingGateway(sandboxGateway());
    h = await createHarness(kind, { gateway: counting.gateway });
    h.clock.set('2026-11-23T14:00:00Z'); // a Monday, 09:00 in New York
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      scheduleMode: 'Internal',
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
  });
  afterAll(async () => {
    await h?.close();
  });

  const create = async (details: Record<string, unknown>, over: Record<string, unknown> = {}) => {
    const r = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: randomUUID(),
        amount: undefined,
        donor: { firstName: 'Chana', lastName: 'Friedman' },
        scheduleDetails: { startDate: civil(h.clock.now), ...details },
        ...over,
      }),
      keyAuth(h),
    );
    expect(r.body.paymentStatus, JSON.stringify(r.body)).toBe('Success');
    return r.body as { scheduleNum: number; receiptNum: string | null };
  };
  const instalments = (scheduleNum: number) =>
    h.db.query<{
      sequence: number;
      status: string;
      attempts: number;
      due_date: string;
      payment_id: string | null;
    }>(
      `SELECT i.sequence, i.status, i.attempts, to_char(i.due_date, 'YYYY-MM-DD') AS due_date, i.payment_id
       FROM schedule_instalments i JOIN schedules s ON s.id = i.schedule_id WHERE s.schedule_num = $1 ORDER BY sequence`,
      [scheduleNum],
    );
  const successes = async (scheduleNum: number) =>
    Number(
      (
        await h.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM payments p JOIN schedules s ON s.id = p.schedule_id
           WHERE s.schedule_num = $1 AND p.status = 'Success'`,
          [scheduleNum],
        )
      )[0]!.n,
    );
  const status = async (scheduleNum: number) =>
    (
      await h.db.query<{ status: string }>('SELECT status FROM schedules WHERE schedule_num = $1', [
        scheduleNum,
      ])
    )[0]!.status;
  const days = async (n: number, scheduler = recurringScheduler(h.deps)) => {
    for (let d = 0; d < n; d++) {
      h.clock.set(new Date(h.clock.now.getTime() + 86_400_000).toISOString());
      await scheduler.drain();
    }
  };

  it('a simulated year: monthly, weekly and Hebrew-monthly schedules each charge every instalment exactly once', async () => {
    const start = h.clock.now;
    const monthly = await create({ frequencyID: 'Monthly', totalPaymentsCount: 12, amountPerPayment: 18 });
    const weekly = await create({ frequencyID: 'Weekly', totalPaymentsCount: 52, amountPerPayment: 5 });
    const hebrew = await create({
      frequencyID: 'Monthly_Hebrew',
      totalPaymentsCount: 12,
      amountPerPayment: 36,
    });
    const later = await create({
      frequencyID: 'Every_2nd_month',
      totalPaymentsCount: 4,
      amountPerPayment: 50,
      startDate: civil(new Date(start.getTime() + 10 * 86_400_000)),
    });
    expect(later.receiptNum).toBeNull();
    await days(400);
    for (const [s, n] of [
      [monthly, 12],
      [weekly, 52],
      [hebrew, 12],
      [later, 4],
    ] as const) {
      const rows = await instalments(s.scheduleNum);
      expect(rows).toHaveLength(n);
      expect(rows.every((r) => r.status === 'charged' && r.attempts === 1)).toBe(true);
      expect(await successes(s.scheduleNum)).toBe(n);
      expect(await status(s.scheduleNum)).toBe('completed');
    }
    // The gateway charged each instalment once, and each success sent a payment webhook.
    expect([...counting.charges.values()].every((c) => c === 1)).toBe(true);
    const [events] = await h.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox_events WHERE event_type = 'payment'`,
    );
    expect(Number(events!.n)).toBeGreaterThanOrEqual(12 + 52 + 12 + 4);
  });

  it('a declined instalment is retried after 1 and 3 days, then missed; the schedule goes on', async () => {
    const s = await create({ frequencyID: 'Monthly', totalPaymentsCount: 3, amountPerPayment: 10 });
    // The card goes bad after the first payment (the sandbox token of a declining card).
    await h.db.query(
      `UPDATE schedules SET instrument = jsonb_set(instrument, '{token}', '"sbx_tok_d_0000000000000000"') WHERE schedule_num = $1`,
      [s.scheduleNum],
    );
    await days(40);
    const rows = await instalments(s.scheduleNum);
    expect(rows[1]).toMatchObject({ status: 'missed', attempts: 3 });
    expect(rows[2]).toMatchObject({ status: 'pending', attempts: 0 });
    await h.db.query(
      `UPDATE schedules SET instrument = jsonb_set(instrument, '{token}', '"sbx_tok_s_0000000000000000"') WHERE schedule_num = $1`,
      [s.scheduleNum],
    );
    await days(40);
    expect((await instalments(s.scheduleNum)).map((r) => r.status)).toEqual(['charged', 'missed', 'charged']);
    expect(await status(s.scheduleNum)).toBe('completed');
  });

  it('cancel stops all further charges; pause holds them and resume skips what fell due meanwhile', async () => {
    const a = await create({ frequencyID: 'Weekly', totalPaymentsCount: 10, amountPerPayment: 7 });
    const b = await create({ frequencyID: 'Weekly', totalPaymentsCount: 10, amountPerPayment: 7 });
    await days(14); // instalments 2 and 3
    const act = (num: number, what: string) =>
      h.request('POST', `/v1/External/Schedules/${num}/${what}`, { orgGuid: h.org.orgGuid }, keyAuth(h));
    const cancelled = await act(a.scheduleNum, 'Cancel');
    expect(cancelled.body).toMatchObject({ status: 'cancelled', paymentsCharged: 3, nextPaymentDate: null });
    expect((await act(b.scheduleNum, 'Pause')).body.status).toBe('paused');
    await days(21);
    expect(await successes(a.scheduleNum)).toBe(3);
    expect(await successes(b.scheduleNum)).toBe(3);
    const resumed = await act(b.scheduleNum, 'Resume');
    expect(resumed.body.status).toBe('active');
    await days(60);
    const rows = await instalments(b.scheduleNum);
    // Paused after instalment 3 for 21 days: the two that fell due before the day of the resume are
    // skipped; the one due on that day is charged.
    expect(rows.filter((r) => r.status === 'skipped').length).toBe(2);
    expect(rows.filter((r) => r.status === 'charged').length).toBe(8);
    expect((await instalments(a.scheduleNum)).filter((r) => r.status === 'cancelled')).toHaveLength(7);
    expect((await act(a.scheduleNum, 'Resume')).status).toBe(409);
    const list = await h.request(
      'GET',
      `/v1/External/Schedules?orgGuid=${h.org.orgGuid}&status=cancelled`,
      undefined,
      keyAuth(h),
    );
    expect(list.body.schedules.map((x: { scheduleNum: number }) => x.scheduleNum)).toContain(a.scheduleNum);
  });

  it('a crash after the gateway charged but before the outcome was recorded: recovery records it, no second charge', async () => {
    const s = await create({ frequencyID: 'Daily', totalPaymentsCount: 3, amountPerPayment: 4 });
    // The process "dies" right after the gateway answered for instalment 2: the clock read that
    // follows the gateway call throws, so the transaction that would record the charge rolls back.
    let armed = false;
    counting.crashAfter((key) => {
      if (key.includes(`:schedule:${s.scheduleNum}:2:`)) armed = true;
      return false;
    });
    const dying: Deps = {
      ...h.deps,
      now: () => {
        if (armed) {
          armed = false;
          throw new Error('simulated crash after the gateway charged');
        }
        return h.clock.now;
      },
    };
    h.clock.set(new Date(h.clock.now.getTime() + 86_400_000).toISOString());
    await expect(recurringScheduler(dying).drain()).rejects.toThrow(/simulated crash/);
    // The claim was committed before the call: the instalment is being charged, its payment Pending.
    expect((await instalments(s.scheduleNum))[1]!.status).toBe('charging');
    const [pending] = await h.db.query<{ status: string }>(
      'SELECT p.status FROM payments p JOIN schedules s ON s.id = p.schedule_id WHERE s.schedule_num = $1 AND p.instalment_seq = 2',
      [s.scheduleNum],
    );
    expect(pending!.status).toBe('Pending');
    await recurringScheduler(h.deps).drain(); // "restarted": the scheduler does not take it again
    expect((await instalments(s.scheduleNum))[1]!.status).toBe('charging');
    // Recovery asks the gateway once the lease of the dead request has passed.
    h.clock.set(new Date(h.clock.now.getTime() + 60_000).toISOString());
    expect(await paymentRecovery(h.deps).drain()).toBe(1);
    expect((await instalments(s.scheduleNum))[1]!.status).toBe('charged');
    await days(2);
    expect(await successes(s.scheduleNum)).toBe(3);
    const keys = [...counting.charges.keys()].filter((k) => k.includes(`:schedule:${s.scheduleNum}:2:`));
    expect(keys).toHaveLength(1); // the gateway was called once for instalment 2
    expect(counting.calls(keys[0]!)).toBe(1);
  });

  it('a new payment method is verified and used for the coming instalments', async () => {
    const s = await create({ frequencyID: 'Weekly', totalPaymentsCount: 3, amountPerPayment: 9 });
    const bad = await h.request(
      'PUT',
      `/v1/External/Schedules/${s.scheduleNum}/PaymentMethod`,
      {
        orgGuid: h.org.orgGuid,
        paymentMethodId: 'Credit_Card',
        card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' },
      },
      keyAuth(h),
    );
    expect(bad.status).toBe(409);
    const ok = await h.request(
      'PUT',
      `/v1/External/Schedules/${s.scheduleNum}/PaymentMethod`,
      {
        orgGuid: h.org.orgGuid,
        paymentMethodId: 'Credit_Card',
        card: { ccNum: '5555555555554444', expiry: '11/29', cvv: '321' },
      },
      keyAuth(h),
    );
    expect(ok.body, JSON.stringify(ok.body)).toMatchObject({ brand: 'Mastercard', last4Digits: '4444' });
    await days(15);
    const [p] = await h.db.query<{ last4: string }>(
      `SELECT p.last4 FROM payments p JOIN schedules s ON s.id = p.schedule_id WHERE s.schedule_num = $1 AND p.instalment_seq = 3`,
      [s.scheduleNum],
    );
    expect(p?.last4).toBe('4444');
  });

  it('Gateway mode: the gateway runs the recurrence; each reported charge is recorded once, with its webhook', async () => {
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Gateway' });
    const s = await create({ frequencyID: 'Weekly', totalPaymentsCount: 4, amountPerPayment: 11 });
    const [row] = await h.db.query<{ gateway_ref: string; handling_mode: string }>(
      'SELECT gateway_ref, handling_mode FROM schedules WHERE schedule_num = $1',
      [s.scheduleNum],
    );
    expect(row).toMatchObject({ handling_mode: 'Gateway', gateway_ref: expect.stringMatching(/^sbx_sub_/) });
    await days(30);
    expect(await successes(s.scheduleNum)).toBe(4);
    expect(await status(s.scheduleNum)).toBe('completed');
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Internal' });
  });

  it.skipIf(kind !== 'postgres')('two schedulers at once never charge one instalment twice', async () => {
    const made = await Promise.all(
      Array.from({ length: 30 }, () =>
        create({ frequencyID: 'Daily', totalPaymentsCount: 8, amountPerPayment: 2 }),
      ),
    );
    const otherDb = await openDatabase({ url: PG_URL, schema: h.schema, poolSize: 10 });
    const otherDeps: Deps = {
      ...h.deps,
      db: otherDb,
      logger: pino({ level: 'silent' }),
      metrics: createMetrics(),
      gateways: staticGatewayRegistry(counting.gateway),
    };
    const a = recurringScheduler(h.deps, { concurrency: 3 });
    const b = recurringScheduler(otherDeps, { concurrency: 3 });
    try {
      for (let d = 0; d < 10; d++) {
        h.clock.set(new Date(h.clock.now.getTime() + 86_400_000).toISOString());
        await Promise.all([a.drain(), b.drain(), a.drain(), b.drain()]);
      }
    } finally {
      await otherDb.close();
    }
    for (const s of made) expect(await successes(s.scheduleNum)).toBe(8);
  });
});
