import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chargeBody, createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

const civil = (d: Date, tz = 'America/New_York') =>
  new Intl.DateTimeFormat('en-CA', { timeZone: tz }).format(d);
const addDays = (ymd: string, n: number) =>
  new Date(Date.parse(`${ymd}T12:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

describe.each(await testDatabases())('SchedulePayment on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
    h.clock.set('2026-11-22T15:00:00Z'); // 10:00 in New York
  });
  afterAll(async () => {
    await h?.close();
  });
  const today = () => civil(h.clock.now);
  const schedule = (details: Record<string, unknown>, over: Record<string, unknown> = {}) =>
    h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: randomUUID(),
        donor: { firstName: 'Dovid', lastName: 'Weiss' },
        scheduleDetails: { frequencyID: 'Monthly', startDate: today(), ...details },
        amount: undefined,
        ...over,
      }),
      keyAuth(h),
    );
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await h.db.query<{ n: number }>(sql, params))[0]!.n);

  it('start today: charges the first payment at once and answers 2.4 with accountId and accountNum', async () => {
    const r = await schedule({ totalPaymentsCount: 12, amountPerPayment: 36 }, { amount: 432 });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(
      [
        'accountId',
        'accountNum',
        'amount',
        'currency',
        'error',
        'paymentStatus',
        'receiptNum',
        'responseTitle',
        'scheduleNum',
        'scheduleTotal',
      ].sort(),
    );
    expect(r.body).toMatchObject({
      paymentStatus: 'Success',
      scheduleTotal: 432,
      amount: 36,
      currency: 'USD',
    });
    expect(r.body.receiptNum).toMatch(/^R\d+$/);
    expect(r.body.accountNum).toMatch(/^D\d+$/);
    expect(r.body.accountId).toBe(Number(r.body.accountNum.slice(1)));
    const [p] = await h.db.query<{ amount_minor: string; instalment_seq: number }>(
      'SELECT amount_minor, instalment_seq FROM payments WHERE receipt_num = $1',
      [r.body.receiptNum],
    );
    expect(Number(p!.amount_minor)).toBe(3600);
    expect(p!.instalment_seq).toBe(1);
  });

  it('the schedule list counts a first payment charged at creation (Integration mode: no instalment rows)', async () => {
    const r = await schedule({ totalPaymentsCount: 3, amountPerPayment: 10 });
    expect(r.body.paymentStatus).toBe('Success');
    const list = await h.request(
      'GET',
      `/v1/External/Schedules?orgGuid=${h.org.orgGuid}&limit=100`,
      undefined,
      keyAuth(h),
    );
    const mine = list.body.schedules.find(
      (s: { scheduleNum: number }) => s.scheduleNum === r.body.scheduleNum,
    );
    expect(mine).toMatchObject({ handlingMode: 'Integration', paymentsCharged: 1, totalPaymentsCount: 3 });
    // A voided first payment is no longer counted as charged.
    const v = await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: r.body.receiptNum },
      keyAuth(h),
    );
    expect(v.body.paymentStatus).toBe('Voided');
    const after = await h.request(
      'GET',
      `/v1/External/Schedules?orgGuid=${h.org.orgGuid}&limit=100`,
      undefined,
      keyAuth(h),
    );
    expect(
      after.body.schedules.find((s: { scheduleNum: number }) => s.scheduleNum === r.body.scheduleNum),
    ).toMatchObject({ paymentsCharged: 0 });
  });

  it('"today" is the organisation\'s civil date, not UTC', async () => {
    h.clock.set('2026-11-23T03:00:00Z'); // still 22 November in New York
    const r = await schedule({ totalPaymentsCount: 2, amountPerPayment: 10, startDate: '2026-11-22' });
    expect(r.body.paymentStatus).toBe('Success');
    expect(r.body.receiptNum).not.toBeNull();
    h.clock.set('2026-11-22T15:00:00Z');
  });

  it('start in the future: no charge at creation, the schedule is stored active with a card-on-file token', async () => {
    const before = await count('SELECT count(*)::int AS n FROM payments');
    const r = await schedule({
      totalPaymentsCount: 6,
      amountPerPayment: 18,
      startDate: addDays(today(), 30),
    });
    expect(r.body).toMatchObject({ paymentStatus: 'Success', receiptNum: null, scheduleTotal: 108 });
    expect(await count('SELECT count(*)::int AS n FROM payments')).toBe(before);
    const [s] = await h.db.query<{ status: string; instrument: { token: string; last4: string } }>(
      'SELECT status, instrument FROM schedules WHERE schedule_num = $1',
      [r.body.scheduleNum],
    );
    expect(s!.status).toBe('active');
    expect(s!.instrument.token).toMatch(/^sbx_tok_/);
    expect(s!.instrument.last4).toBe('4242');
    expect(JSON.stringify(s)).not.toContain('4242424242424242');
  });

  it('an offline schedule is judged by its device date, within the offline window only', async () => {
    // Taken yesterday evening on a device (New York), forwarded now: it started "today" then.
    const yesterday = addDays(today(), -1);
    const ok = await schedule(
      { totalPaymentsCount: 2, amountPerPayment: 10, startDate: yesterday },
      { deviceInfo: { deviceCreatedDate: `${yesterday}T22:00:00-05:00` } },
    );
    expect(ok.body).toMatchObject({ paymentStatus: 'Success' });
    expect(ok.body.receiptNum).toMatch(/^R\d+$/);
    const stale = await schedule(
      { totalPaymentsCount: 2, amountPerPayment: 10, startDate: addDays(today(), -4) },
      { deviceInfo: { deviceCreatedDate: `${addDays(today(), -4)}T12:00:00Z` } },
    );
    expect(stale.status).toBe(400);
    expect(stale.body.error.fields[0].field).toBe('deviceInfo.deviceCreatedDate');
    const future = await schedule(
      { totalPaymentsCount: 2, amountPerPayment: 10 },
      { deviceInfo: { deviceCreatedDate: new Date(h.clock.now.getTime() + 3_600_000).toISOString() } },
    );
    expect(future.body.error.fields[0].field).toBe('deviceInfo.deviceCreatedDate');
  });

  it('a start date in the past is 400 on scheduleDetails.startDate', async () => {
    const r = await schedule({
      totalPaymentsCount: 3,
      amountPerPayment: 10,
      startDate: addDays(today(), -1),
    });
    expect(r.status).toBe(400);
    expect(r.body.error.fields[0].field).toBe('scheduleDetails.startDate');
  });

  it('a declined first payment: paymentStatus Failed, scheduleNum null, the schedule is not active', async () => {
    const r = await schedule(
      { totalPaymentsCount: 3, amountPerPayment: 10 },
      { card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } },
    );
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      paymentStatus: 'Failed',
      scheduleNum: null,
      error: { errorCode: 'CARD_DECLINED' },
    });
    expect(
      await count(
        `SELECT count(*)::int AS n FROM schedules WHERE status = 'active' AND unique_transaction_id IN (SELECT unique_transaction_id FROM payments WHERE receipt_num = $1)`,
        [r.body.receiptNum],
      ),
    ).toBe(0);
  });

  it('amounts: total = first + per × (count − 1); missing ones are derived; inconsistent ones are 400', async () => {
    const derived = await schedule({ totalPaymentsCount: 3, firstPaymentAmount: 50, amountPerPayment: 25 });
    expect(derived.body).toMatchObject({ scheduleTotal: 100, amount: 50 });
    const split = await schedule({ totalPaymentsCount: 3 }, { amount: 100 });
    expect(split.body).toMatchObject({ scheduleTotal: 100, amount: 33.34 });
    const [s] = await h.db.query<{ first_minor: string; per_payment_minor: string }>(
      'SELECT first_minor, per_payment_minor FROM schedules WHERE schedule_num = $1',
      [split.body.scheduleNum],
    );
    expect([Number(s!.first_minor), Number(s!.per_payment_minor)]).toEqual([3334, 3333]);
    const bad = await schedule(
      { totalPaymentsCount: 3, firstPaymentAmount: 50, amountPerPayment: 25 },
      { amount: 99 },
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('amount');
    const zero = await schedule({ totalPaymentsCount: 0, amountPerPayment: 10 });
    expect(zero.body.error.fields[0].field).toBe('scheduleDetails.totalPaymentsCount');
  });

  it('bad terms are 400s naming the field, and write nothing', async () => {
    const before = await count('SELECT count(*)::int AS n FROM schedules');
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [
        { frequencyID: 'Fortnightly', totalPaymentsCount: 2, amountPerPayment: 1 },
        {},
        'scheduleDetails.frequencyID',
      ],
      [
        { startDate: '2026-02-30', totalPaymentsCount: 2, amountPerPayment: 1 },
        {},
        'scheduleDetails.startDate',
      ],
      [
        { frequencyID: 'Special_Days', totalPaymentsCount: 2, amountPerPayment: 1 },
        {},
        'scheduleDetails.specialDays',
      ],
      [
        { totalPaymentsCount: 2, amountPerPayment: 1 },
        { uniqueTransactionId: 'not-a-guid' },
        'uniqueTransactionId',
      ],
    ];
    for (const [details, over, field] of cases) {
      const r = await schedule(details, over);
      expect(r.status, field).toBe(400);
      expect(
        r.body.error.fields.map((f: { field: string }) => f.field),
        field,
      ).toContain(field);
    }
    expect(await count('SELECT count(*)::int AS n FROM schedules')).toBe(before);
  });

  it('Special_Days with presets or dates is accepted', async () => {
    const r = await schedule({
      frequencyID: 'Special_Days',
      totalPaymentsCount: 4,
      amountPerPayment: 18,
      startDate: addDays(today(), 3),
      specialDays: { presets: ['erev_shabbat'] },
    });
    expect(r.body.paymentStatus).toBe('Success');
  });

  it('idempotent on uniqueTransactionId: same body replays, another body is 409', async () => {
    const body = chargeBody(h, {
      uniqueTransactionId: randomUUID(),
      scheduleDetails: {
        frequencyID: 'Weekly',
        startDate: today(),
        totalPaymentsCount: 4,
        amountPerPayment: 5,
      },
    });
    const a = await h.request('POST', '/v1/External/SchedulePayment', body, keyAuth(h));
    const b = await h.request('POST', '/v1/External/SchedulePayment', body, keyAuth(h));
    expect(b.body).toEqual(a.body);
    const c = await h.request('POST', '/v1/External/SchedulePayment', { ...body, amount: 999 }, keyAuth(h));
    expect(c.status).toBe(409);
    expect(
      await count('SELECT count(*)::int AS n FROM schedules WHERE unique_transaction_id = $1', [
        body.uniqueTransactionId,
      ]),
    ).toBe(1);
  });

  it('SchedulePreview takes the SchedulePayment body, answers civil and Hebrew dates, and stores or charges nothing', async () => {
    const before = [
      await count('SELECT count(*)::int AS n FROM schedules'),
      await count('SELECT count(*)::int AS n FROM payments'),
    ];
    const body = chargeBody(h, {
      uniqueTransactionId: randomUUID(),
      amount: 180,
      scheduleDetails: { frequencyID: 'Monthly_Hebrew', startDate: '2026-12-01', totalPaymentsCount: 10 },
    });
    const r = await h.request('POST', '/v1/External/SchedulePreview', body, keyAuth(h));
    expect(r.status).toBe(200);
    expect(r.body.total).toBe(180);
    expect(r.body.instalments).toHaveLength(10);
    expect(r.body.instalments[0]).toEqual({
      sequence: 1,
      dueDate: '2026-12-01',
      hebrewDate: '21 Kislev 5787',
      hebrewDateHebrew: expect.stringContaining('כ״א'),
      amount: 18,
    });
    // From the original Hebrew day: 21 Tevet, 21 Shvat, … each a Hebrew month later (a Shabbat or
    // Yom Tov moves a charge to the day before, so the Hebrew day is 21, or 20 when moved).
    const days = r.body.instalments.map((i: { hebrewDate: string }) => i.hebrewDate.split(' ')[0]);
    expect(days.every((d: string) => d === '21' || d === '20')).toBe(true);
    // 5787 is a leap year: Adar I and Adar II are both months of it.
    const months = r.body.instalments.map((i: { hebrewDate: string }) =>
      i.hebrewDate.split(' ').slice(1, -1).join(' '),
    );
    expect(months).toContain('Adar I');
    expect(months).toContain('Adar II');
    expect(new Set(months).size).toBe(10);
    expect(r.body.instalments.reduce((s: number, i: { amount: number }) => s + i.amount, 0)).toBe(180);
    expect([
      await count('SELECT count(*)::int AS n FROM schedules'),
      await count('SELECT count(*)::int AS n FROM payments'),
    ]).toEqual(before);
    const bad = await h.request(
      'POST',
      '/v1/External/SchedulePreview',
      {
        orgGUID: h.org.orgGuid,
        scheduleDetails: { frequencyID: 'Yearly', startDate: '2026-12-10', totalPaymentsCount: 2 },
      },
      keyAuth(h),
    );
    expect(bad.status).toBe(400);
    expect(bad.body.error.fields[0].field).toBe('scheduleDetails.frequencyID');
  });

  it('stores the handling mode of the organisation (default Integration)', async () => {
    const a = await schedule({ totalPaymentsCount: 2, amountPerPayment: 5, startDate: addDays(today(), 5) });
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Internal' });
    const b = await schedule({ totalPaymentsCount: 2, amountPerPayment: 5, startDate: addDays(today(), 5) });
    const modes = await h.db.query<{ schedule_num: string; handling_mode: string }>(
      'SELECT schedule_num, handling_mode FROM schedules WHERE schedule_num IN ($1, $2) ORDER BY schedule_num',
      [a.body.scheduleNum, b.body.scheduleNum],
    );
    expect(modes.map((m) => m.handling_mode)).toEqual(['Integration', 'Internal']);
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { scheduleMode: 'Integration' });
  });
});
