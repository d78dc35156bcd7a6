import { randomUUID } from 'node:crypto';
import { paymentWebhook, pullResponse, pushResponse } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents } from '../outbox/repo.ts';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import { createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';

const HOUR = 3_600_000;

describe.each(await testDatabases())('device sync on %s', (kind) => {
  let h: Harness;
  let orgId: number;
  let device: TestDevice;
  beforeAll(async () => {
    h = await createHarness(kind);
    orgId = Number(
      (await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [h.org.orgGuid]))[0]!.id,
    );
    device = await pairTestDevice(h, 'Lobby Kiosk');
  });
  afterAll(async () => {
    await h?.close();
  });

  const card = (ccNum = '4242424242424242') => ({ ccNum, expiry: '12/30', cvv: '123' });
  const chargeReq = (over: Record<string, unknown> = {}) => ({
    amount: 18,
    currency: 'USD',
    paymentMethodId: 'Credit_Card',
    card: card(),
    deviceInfo: {
      deviceName: 'Lobby Kiosk',
      timezone: 'America/New_York',
      location: { locationName: 'Main lobby', latitude: 40.7128, longitude: -74.006 },
    },
    ...over,
  });
  const paymentsOf = async (opId: string) =>
    h.db.query<{ receipt_num: string; status: string }>(
      'SELECT receipt_num, status FROM payments WHERE unique_transaction_id = $1',
      [opId],
    );

  describe('pairing', () => {
    it('a code pairs once; the device gets its credential, settings, key and first reference data', async () => {
      const campaign = await h.request(
        'PUT',
        '/V1/External/SaveCampaign',
        { orgGuid: h.org.orgGuid, campaignNumber: 0, campaignName: 'Gala 5787' },
        keyAuth(h),
      );
      expect(campaign.status).toBe(200);
      const created = await h.admin('POST', `/orgs/${h.org.orgGuid}/devices`, {
        name: 'Kiosk 2',
        sandbox: true,
      });
      expect(created.status).toBe(201);
      expect(created.body.pairingCode).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
      // Typed by hand: lower case, no dash.
      const code = created.body.pairingCode.replace('-', '').toLowerCase();
      const paired = await h.request('POST', '/v1/Device/Pair', { pairingCode: code, appVersion: '1.2.3' });
      expect(paired.status).toBe(200);
      expect(paired.body.deviceId).toBe(created.body.deviceId);
      expect(paired.body.settings).toMatchObject({
        orgGuid: h.org.orgGuid,
        deviceName: 'Kiosk 2',
        sandbox: true,
      });
      expect(paired.body.settings.offline).toEqual({
        perPaymentMinor: 100_000,
        totalMinor: 1_000_000,
        expiryHours: 72,
      });
      expect(paired.body.encryptionKey.jwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
      expect(paired.body.encryptionKey.jwk.d).toBeUndefined();
      expect(pullResponse.safeParse(paired.body.pull).success).toBe(true);
      expect(paired.body.pull.campaigns.map((c: { name: string }) => c.name)).toContain('Gala 5787');

      const again = await h.request('POST', '/v1/Device/Pair', { pairingCode: created.body.pairingCode });
      expect(again.status).toBe(400);
      expect(again.body.error.errorCode).toBe('PAIRING_CODE_INVALID');
      // The credential is stored hashed only.
      const stored = await h.db.query('SELECT 1 FROM sources WHERE guid_hash = $1', [paired.body.credential]);
      expect(stored).toHaveLength(0);
    });

    it('an expired or unknown code is refused', async () => {
      const created = await h.admin('POST', `/orgs/${h.org.orgGuid}/devices`, {
        name: 'Late',
        sandbox: true,
      });
      const saved = h.clock.now;
      h.clock.set(new Date(saved.getTime() + 16 * 60_000).toISOString());
      try {
        const r = await h.request('POST', '/v1/Device/Pair', { pairingCode: created.body.pairingCode });
        expect(r.status).toBe(400);
        expect(r.body.error.errorCode).toBe('PAIRING_CODE_INVALID');
      } finally {
        h.clock.now = saved;
      }
      const unknown = await h.request('POST', '/v1/Device/Pair', { pairingCode: 'ABCD-EFGH' });
      expect(unknown.body.error.errorCode).toBe('PAIRING_CODE_INVALID');
      const list = await h.admin('GET', `/orgs/${h.org.orgGuid}/devices`);
      expect(list.body.devices.find((d: { name: string }) => d.name === 'Late').status).toBe(
        'waiting for pairing',
      );
    });
  });

  it('pairing attempts are rate limited per client address', async () => {
    const tries = await Promise.all(
      Array.from({ length: 12 }, () =>
        h.request(
          'POST',
          '/v1/Device/Pair',
          { pairingCode: 'ZZZZ-ZZZZ' },
          { 'x-forwarded-for': '203.0.113.9' },
        ),
      ),
    );
    expect(tries.filter((r) => r.status === 429).length).toBeGreaterThan(0);
    expect(tries.find((r) => r.status === 429)!.headers.get('retry-after')).toMatch(/^\d+$/);
    const other = await h.request(
      'POST',
      '/v1/Device/Pair',
      { pairingCode: 'ZZZZ-ZZZZ' },
      { 'x-forwarded-for': '203.0.113.10' },
    );
    expect(other.status).toBe(400);
  });

  describe('push', () => {
    it('answers each operation; a bad one among good ones does not stop them; a replay answers the same', async () => {
      const good1 = await sealedOp(device, 'charge', chargeReq());
      const declined = await sealedOp(device, 'charge', chargeReq({ card: card('4000000000000002') }));
      const bad = await sealedOp(device, 'charge', chargeReq({ amount: -5 }));
      const good2 = await sealedOp(device, 'charge', chargeReq({ amount: 36, currency: 'ILS' }));
      const ops = [good1, declined, bad, good2];
      const r = await device.push(ops);
      expect(r.status).toBe(200);
      expect(pushResponse.safeParse(r.body).success).toBe(true);
      const [a, b, c, d] = r.body.results;
      expect(a).toMatchObject({ opId: good1.opId, status: 'Success', retryable: false });
      expect(a.receiptNum).toMatch(/\d+/);
      expect(b).toMatchObject({ opId: declined.opId, status: 'Declined', retryable: false });
      expect(c).toMatchObject({ opId: bad.opId, status: 'Error', retryable: false });
      expect(c.error.errorCode).toBe('VALIDATION_FAILED');
      expect(c.error.fields.map((f: { field: string }) => f.field)).toContain('amount');
      expect(d).toMatchObject({ opId: good2.opId, status: 'Success' });

      const replay = await device.push(ops);
      expect(replay.body.results).toEqual(r.body.results);
      expect(await paymentsOf(good1.opId)).toHaveLength(1);
      expect(await paymentsOf(good2.opId)).toHaveLength(1);
      expect(await paymentsOf(bad.opId)).toHaveLength(0);
    });

    it('batches out of order: each operation is charged once whatever order they arrive in', async () => {
      const ops = await Promise.all([1, 2, 3, 4].map(() => sealedOp(device, 'charge', chargeReq())));
      const late = await device.push([ops[3]!, ops[1]!]);
      const all = await device.push([ops[0]!, ops[1]!, ops[2]!, ops[3]!]);
      expect(all.body.results.map((x: { status: string }) => x.status)).toEqual([
        'Success',
        'Success',
        'Success',
        'Success',
      ]);
      expect(all.body.results[3]).toEqual(late.body.results[0]);
      expect(all.body.results[1]).toEqual(late.body.results[1]);
      for (const op of ops) expect(await paymentsOf(op.opId)).toHaveLength(1);
    });

    it('the payment webhook carries the device name, time zone, location and the time on the device', async () => {
      const taken = new Date(h.clock.now.getTime() - 5 * HOUR).toISOString();
      const op = await sealedOp(device, 'charge', chargeReq(), { deviceCreatedDate: taken });
      const r = await device.push([op]);
      expect(r.body.results[0].status).toBe('Success');
      const events = await listEvents(h.db, orgId, 'payment');
      const body = events.find(
        (e) => (e.payload as { paymentNumber: string }).paymentNumber === r.body.results[0].receiptNum,
      )!.payload as Record<string, unknown>;
      expect(paymentWebhook.strict().safeParse(body).success).toBe(true);
      expect(body).toMatchObject({
        deviceName: 'Lobby Kiosk',
        timezone: 'America/New_York',
        deviceCreatedDate: new Date(taken).toISOString(),
        locationInfo: { locationName: 'Main lobby', latitude: '40.7128', longitude: '-74.006' },
        last4Digits: '4242',
      });
    });

    it('an item past the offline window is not charged; one answered before it expired replays its answer', async () => {
      const old = new Date(h.clock.now.getTime() - 73 * HOUR).toISOString();
      const expired = await sealedOp(device, 'charge', chargeReq(), { deviceCreatedDate: old });
      const r = await device.push([expired]);
      expect(r.body.results[0]).toMatchObject({ status: 'Error', retryable: false });
      expect(r.body.results[0].error.errorCode).toBe('OFFLINE_EXPIRED');
      expect(await paymentsOf(expired.opId)).toHaveLength(0);

      const fresh = await sealedOp(device, 'charge', chargeReq(), {
        deviceCreatedDate: new Date(h.clock.now.getTime() - 71 * HOUR).toISOString(),
      });
      const first = await device.push([fresh]);
      expect(first.body.results[0].status).toBe('Success');
      const saved = h.clock.now;
      h.clock.set(new Date(saved.getTime() + 2 * HOUR).toISOString());
      try {
        const again = await device.push([fresh]);
        expect(again.body.results).toEqual(first.body.results);
      } finally {
        h.clock.now = saved;
      }
      expect(await paymentsOf(fresh.opId)).toHaveLength(1);
    });

    it('refuses card data sent in clear, a tampered envelope and an envelope of another operation', async () => {
      const clear = await sealedOp(device, 'charge', chargeReq());
      clear.request.card = { ...(clear.request.card as object), ccNum: '4242424242424242' };
      const tampered = await sealedOp(device, 'charge', chargeReq());
      const ct = tampered.sealed!.ct;
      tampered.sealed = { ...tampered.sealed!, ct: (ct[0] === 'A' ? 'B' : 'A') + ct.slice(1) };
      const donor = await sealedOp(device, 'charge', chargeReq());
      const thief = { ...(await sealedOp(device, 'charge', chargeReq())), sealed: donor.sealed };
      const unknownKid = await sealedOp(device, 'charge', chargeReq());
      unknownKid.sealed = { ...unknownKid.sealed!, kid: 'k_nosuchkey' };
      const r = await device.push([clear, tampered, thief, unknownKid]);
      expect(r.body.results.map((x: { error: { errorCode: string } }) => x.error.errorCode)).toEqual([
        'VALIDATION_FAILED',
        'ENVELOPE_INVALID',
        'ENVELOPE_INVALID',
        'ENVELOPE_UNKNOWN_KEY',
      ]);
      for (const op of [clear, tampered, thief, unknownKid])
        expect(await paymentsOf(op.opId)).toHaveLength(0);
    });

    it('a schedule taken offline yesterday that started "today" on the device still charges its first payment', async () => {
      const takenAt = new Date(h.clock.now.getTime() - 20 * HOUR);
      const deviceToday = new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(takenAt);
      const op = await sealedOp(
        device,
        'schedule',
        {
          ...chargeReq({ amount: 120 }),
          scheduleDetails: { frequencyID: 'Monthly_Hebrew', startDate: deviceToday, totalPaymentsCount: 12 },
        },
        { deviceCreatedDate: takenAt.toISOString() },
      );
      const r = await device.push([op]);
      expect(r.body.results[0]).toMatchObject({ status: 'Success', retryable: false });
      expect(r.body.results[0].scheduleNum).toMatch(/^\d+$/);
      expect(r.body.results[0].receiptNum).toMatch(/\d+/);
      const again = await device.push([op]);
      expect(again.body.results).toEqual(r.body.results);
    });

    it('donor saves are idempotent by opId; voids of forwarded payments go through', async () => {
      const save = await sealedOp(device, 'saveDonor', {
        donorID: '',
        firstNameHebrew: 'שרה',
        lastNameHebrew: 'כהן',
        donorPhones: [{ phoneNumber: '0541234567' }],
      });
      const first = await device.push([save]);
      expect(first.body.results[0]).toMatchObject({ status: 'Success' });
      expect(first.body.results[0].accountNum).toMatch(/^D\d+$/);
      const again = await device.push([save]);
      expect(again.body.results[0].accountNum).toBe(first.body.results[0].accountNum);
      const named = await h.db.query("SELECT 1 FROM donors WHERE first_name_hebrew = 'שרה'");
      expect(named).toHaveLength(1);

      const pay = await sealedOp(device, 'charge', chargeReq());
      const paid = (await device.push([pay])).body.results[0];
      const v = await sealedOp(device, 'void', { receiptNum: paid.receiptNum, reason: 'wrong amount' });
      const voided = await device.push([v]);
      expect(voided.body.results[0]).toMatchObject({ status: 'Success', receiptNum: paid.receiptNum });
      expect((await paymentsOf(pay.opId))[0]!.status).toBe('Voided');
    });

    it('records last seen, app version and the queue reported on each push', async () => {
      const op = await sealedOp(device, 'charge', chargeReq());
      await device.push([op], { depth: 7, totalMinor: 12_600, byKid: { [device.key.kid]: 7 } });
      const list = await h.admin('GET', `/orgs/${h.org.orgGuid}/devices`);
      const me = list.body.devices.find((d: { deviceId: string }) => d.deviceId === device.deviceId);
      expect(me).toMatchObject({
        status: 'paired',
        appVersion: 'test-1.0',
        queueDepth: 7,
        queueTotalMinor: 12_600,
      });
      expect(Date.parse(me.lastSeenAt)).toBeGreaterThan(Date.now() - 60_000);
    });

    it('the name typed at pairing is the device name; a pull reports renames and the queue left after the pushes', async () => {
      const created = await h.admin('POST', `/orgs/${h.org.orgGuid}/devices`, {
        name: 'Admin name',
        sandbox: true,
      });
      const paired = await h.request('POST', '/v1/Device/Pair', {
        pairingCode: created.body.pairingCode,
        deviceName: 'Front desk',
        appVersion: 'test-1.0',
      });
      expect(paired.status).toBe(200);
      expect(paired.body.settings.deviceName).toBe('Front desk');
      // The organisation's Shabbat setting reaches the device (its schedule preview follows it).
      expect(paired.body.settings.shabbatShift).toBe(true);
      // So do the names of its charity-card providers; a new preset list keeps them; null removes one.
      const named = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        terminal: { providerNames: { Provider_1: "Donors' Fund", Provider_2: 'OJC' } },
      });
      expect(named.status, JSON.stringify(named.body)).toBe(200);
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        terminal: { presetsMinor: [1800, 3600], providerNames: { Provider_2: null } },
      });
      const refreshed = await h.request('GET', '/v1/Device/Sync/Pull', undefined, {
        authorization: paired.body.credential,
      });
      expect(refreshed.body.settings).toMatchObject({
        presetsMinor: [1800, 3600],
        providerNames: { Provider_1: "Donors' Fund" },
      });
      expect(refreshed.body.settings.providerNames).not.toHaveProperty('Provider_2');
      const badProvider = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        terminal: { providerNames: { Provider_9: 'x' } },
      });
      expect(badProvider.status).toBe(400);
      // The kiosk's look: a colour and a small logo as a data: URL; anything else is refused.
      const logo = 'data:image/png;base64,iVBORw0KGgo=';
      const branded = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        terminal: { brand: { color: '#7a1f4e', logo } },
      });
      expect(branded.status, JSON.stringify(branded.body)).toBe(200);
      const withBrand = await h.request('GET', '/v1/Device/Sync/Pull', undefined, {
        authorization: paired.body.credential,
      });
      expect(withBrand.body.settings.brand).toEqual({ color: '#7a1f4e', logo });
      for (const brand of [{ color: 'red' }, { logo: 'https://example.org/logo.png' }]) {
        const refused = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { terminal: { brand } });
        expect(refused.status, JSON.stringify(brand)).toBe(400);
      }
      const mine = async () =>
        (await h.admin('GET', `/orgs/${h.org.orgGuid}/devices`)).body.devices.find(
          (d: { deviceId: string }) => d.deviceId === paired.body.deviceId,
        );
      expect(await mine()).toMatchObject({ name: 'Front desk' });
      const auth = { authorization: paired.body.credential };
      // A push reports the queue before it (2 waiting) …
      const [a, b] = await Promise.all([
        sealedOp({ deviceId: paired.body.deviceId, key: paired.body.encryptionKey }, 'charge', chargeReq()),
        sealedOp({ deviceId: paired.body.deviceId, key: paired.body.encryptionKey }, 'charge', chargeReq()),
      ]);
      await h.request(
        'POST',
        '/v1/Device/Sync/Push',
        {
          deviceId: paired.body.deviceId,
          appVersion: 'test-1.0',
          queue: { depth: 2, totalMinor: 3600 },
          operations: [a, b],
        },
        auth,
      );
      expect(await mine()).toMatchObject({ queueDepth: 2, queueTotalMinor: 3600 });
      // … and the pull that ends the run reports what is left (nothing), and the new name.
      const pulled = await h.request(
        'GET',
        `/v1/Device/Sync/Pull?queueDepth=0&queueTotalMinor=0&deviceName=${encodeURIComponent('Lobby (north)')}`,
        undefined,
        auth,
      );
      expect(pulled.status).toBe(200);
      expect(pulled.body.settings.deviceName).toBe('Lobby (north)');
      expect(await mine()).toMatchObject({ name: 'Lobby (north)', queueDepth: 0, queueTotalMinor: 0 });
      // Payments taken after the rename carry the new name as their source's.
      const [src] = await h.db.query<{ name: string }>(
        'SELECT s.name FROM sources s JOIN devices d ON d.source_id = s.id WHERE d.device_id = $1',
        [paired.body.deviceId],
      );
      expect(src?.name).toBe('Lobby (north)');
      const bad = await h.request('GET', '/v1/Device/Sync/Pull?queueDepth=-1', undefined, auth);
      expect(bad.status).toBe(400);
    });

    it('refuses a push that names another device, or more than 100 operations', async () => {
      const op = await sealedOp(device, 'charge', chargeReq());
      const other = await h.request(
        'POST',
        '/v1/Device/Sync/Push',
        { deviceId: 'dev_other', queue: { depth: 1, totalMinor: 0 }, operations: [op] },
        { authorization: device.credential },
      );
      expect(other.status).toBe(403);
      const many = Array.from({ length: 101 }, () => ({ ...op, opId: randomUUID() }));
      const tooMany = await device.push(many);
      expect(tooMany.status).toBe(400);
      expect(tooMany.body.error.fields[0].field).toBe('operations');
    });
  });

  describe('end of shift', () => {
    it("records a close once, answers the server's totals of the shift, shows it in the device list and the reports API", async () => {
      const d = await pairTestDevice(h, 'Shift kiosk');
      const openedAt = new Date(Date.now() - 60_000).toISOString();
      const now = () => new Date().toISOString();
      const ok1 = await sealedOp(d, 'charge', chargeReq({ amount: 18 }), { deviceCreatedDate: now() });
      const ok2 = await sealedOp(d, 'charge', chargeReq({ amount: 36, currency: 'ILS' }), {
        deviceCreatedDate: now(),
      });
      const no = await sealedOp(d, 'charge', chargeReq({ amount: 5, card: card('4000000000000002') }), {
        deviceCreatedDate: now(),
      });
      const pushed = await d.push([ok1, ok2, no]);
      expect(pushed.body.results.map((r: { status: string }) => r.status)).toEqual([
        'Success',
        'Success',
        'Declined',
      ]);
      const closedAt = new Date(Date.now() + 1_000).toISOString();
      const body = {
        deviceId: d.deviceId,
        closeId: '3f2b8c1e-5d4a-4c7e-9b1f-2a6d8e0c4b71',
        openedAt,
        closedAt,
        closedBy: 'Rivka',
        totals: {
          succeeded: [
            { method: 'Credit_Card', currency: 'ILS', count: 1, amountMinor: 3600 },
            { method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 1800 },
          ],
          voided: [],
          declined: [{ method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 500 }],
          queued: [],
        },
      };
      const auth = { authorization: d.credential };
      const r = await h.request('POST', '/v1/Device/Shift/Close', body, auth);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      // The server counted the same as the device.
      expect(r.body.server.succeeded).toEqual(body.totals.succeeded);
      expect(r.body.server.declined).toEqual(body.totals.declined);
      const again = await h.request('POST', '/v1/Device/Shift/Close', body, auth);
      expect(again.body.recordedAt).toBe(r.body.recordedAt);
      const list = await h.admin('GET', `/orgs/${h.org.orgGuid}/devices`);
      const me = list.body.devices.find((x: { deviceId: string }) => x.deviceId === d.deviceId);
      expect(me.lastShiftClosedAt).toBe(closedAt);
      const shifts = await h.request(
        'GET',
        `/v1/External/Reports/Shifts?deviceId=${d.deviceId}`,
        undefined,
        keyAuth(h),
      );
      expect(shifts.status).toBe(200);
      expect(shifts.body.shifts).toHaveLength(1);
      expect(shifts.body.shifts[0]).toMatchObject({ closedBy: 'Rivka', deviceName: 'Shift kiosk', closedAt });
      // Bad input: a close before its opening, another device's id, a close id that is not a UUID.
      const backwards = await h.request(
        'POST',
        '/v1/Device/Shift/Close',
        { ...body, closedAt: openedAt, openedAt: closedAt },
        auth,
      );
      expect(backwards.status).toBe(400);
      expect(backwards.body.error.fields[0].field).toBe('closedAt');
      expect(
        (await h.request('POST', '/v1/Device/Shift/Close', { ...body, deviceId: 'dev_other' }, auth)).status,
      ).toBe(403);
      expect(
        (await h.request('POST', '/v1/Device/Shift/Close', { ...body, closeId: 'x' }, auth)).status,
      ).toBe(400);
    });
  });

  describe('pull', () => {
    it('returns what changed since the cursor, page by page, and changed rows again', async () => {
      const d = await pairTestDevice(h, 'Puller');
      let cursor = '';
      for (let page = 0; ; page++) {
        const r = await d.pull(cursor || undefined, 2);
        expect(r.status).toBe(200);
        cursor = r.body.cursor;
        if (!r.body.more) break;
        expect(page).toBeLessThan(100);
      }
      const empty = await d.pull(cursor);
      expect(empty.body.donors).toEqual([]);
      expect(empty.body.campaigns).toEqual([]);

      const saved = await h.request(
        'PUT',
        '/V1/External/SaveDonor',
        {
          orgGuid: h.org.orgGuid,
          donorID: '',
          firstName: 'Moshe',
          lastName: 'Levi',
          donorPhones: [{ phoneNumber: '2125550100' }],
        },
        keyAuth(h),
      );
      const next = await d.pull(cursor);
      expect(next.body.donors).toEqual([
        expect.objectContaining({
          accountNum: saved.body.donorId,
          firstName: 'Moshe',
          phones: ['••• ••• 0100'],
        }),
      ]);
      await h.request(
        'PUT',
        '/V1/External/SaveDonor',
        {
          orgGuid: h.org.orgGuid,
          donorID: saved.body.donorId,
          firstNameHebrew: 'משה',
          lastNameHebrew: 'לוי',
        },
        keyAuth(h),
      );
      const changed = await d.pull(next.body.cursor);
      expect(changed.body.donors).toEqual([
        expect.objectContaining({ accountNum: saved.body.donorId, firstNameHebrew: 'משה' }),
      ]);
      const bad = await d.pull('not-a-cursor');
      expect(bad.status).toBe(400);
    });
  });

  describe('keys and revocation', () => {
    it('after a rotation, items sealed under the old key still open; it retires only once no device holds any', async () => {
      const d = await pairTestDevice(h, 'Rotator');
      const oldKid = d.key.kid;
      const sealedBefore = await sealedOp(d, 'charge', chargeReq());
      const rotated = await h.admin('POST', '/envelope-keys/rotate');
      expect(rotated.status).toBe(201);
      expect(rotated.body.kid).not.toBe(oldKid);
      // The device reports an item under the old key: the old key cannot be retired yet.
      const r = await d.push([sealedBefore], { depth: 2, totalMinor: 3600, byKid: { [oldKid]: 1 } });
      expect(r.body.results[0].status).toBe('Success');
      expect(r.body.encryptionKey.kid).toBe(rotated.body.kid);
      const refused = await h.admin('POST', `/envelope-keys/${oldKid}/retire`);
      expect(refused.status).toBe(409);
      expect(refused.body.error.message).toContain(d.deviceId);
      // Both devices holding items under it sync them and report an empty queue: now it retires.
      const emptyQueue = { depth: 0, totalMinor: 0, byKid: {} };
      for (const holder of [d, device]) {
        const nothing = await sealedOp(holder, 'saveDonor', {
          donorID: '',
          firstName: 'Queue',
          lastName: 'Empty',
        });
        expect((await holder.push([nothing], emptyQueue)).status).toBe(200);
      }
      const retired = await h.admin('POST', `/envelope-keys/${oldKid}/retire`);
      expect(retired.status).toBe(200);
      const afterRetire = await sealedOp(d, 'charge', chargeReq());
      const gone = await d.push([afterRetire]);
      expect(gone.body.results[0].error.errorCode).toBe('ENVELOPE_UNKNOWN_KEY');
    });

    it('answers a browser preflight from any origin (the desktop terminal loads from file://)', async () => {
      const r = await h.request('OPTIONS', '/v1/Device/Sync/Push', undefined, {
        origin: 'null',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      });
      expect(r.status).toBe(204);
      expect(r.headers.get('access-control-allow-origin')).toBe('*');
      expect(r.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
      const external = await h.request('OPTIONS', '/v1/External/Charge', undefined, { origin: 'null' });
      expect(external.headers.get('access-control-allow-origin')).toBeNull();
    });

    it('a revoked device is refused with DEVICE_REVOKED on push and pull', async () => {
      const d = await pairTestDevice(h, 'Stolen laptop');
      const op = await sealedOp(d, 'charge', chargeReq());
      const revoked = await h.admin('POST', `/orgs/${h.org.orgGuid}/devices/${d.deviceId}/revoke`);
      expect(revoked.status).toBe(200);
      expect(revoked.body.device.status).toBe('revoked');
      const r = await d.push([op]);
      expect(r.status).toBe(403);
      expect(r.body.error.errorCode).toBe('DEVICE_REVOKED');
      expect((await d.pull()).body.error.errorCode).toBe('DEVICE_REVOKED');
      expect(await paymentsOf(op.opId)).toHaveLength(0);
      // Its credential is no source for the External API either.
      const ext = await h.request(
        'POST',
        '/v1/External/Charge',
        { orgGUID: h.org.orgGuid },
        { authorization: d.credential },
      );
      expect(ext.status).toBe(401);
      const unknown = await h.request(
        'POST',
        '/v1/Device/Sync/Push',
        { deviceId: d.deviceId, queue: { depth: 0, totalMinor: 0 }, operations: [op] },
        { authorization: randomUUID() },
      );
      expect(unknown.status).toBe(401);
    });
  });
});
