import { randomUUID } from 'node:crypto';
import { paymentWebhook, scheduleWebhook, voidWebhook } from '@kupah/contracts';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { chargeBody, createHarness, type Harness, keyAuth, testDatabases } from '../testing/harness.ts';
import { type Receiver, startReceiver } from '../testing/receiver.ts';
import { type WebhookDispatcher, webhookDispatcher } from './dispatcher.ts';
import { MAX_ATTEMPTS, RETRY_DELAYS_SECONDS } from './retry-schedule.ts';

describe.each(await testDatabases())('webhook delivery on %s', (kind) => {
  let h: Harness;
  let rx: Receiver;
  let device: string;
  let dispatcher: WebhookDispatcher;
  let secrets: Record<string, string>;

  beforeAll(async () => {
    h = await createHarness(kind);
    rx = await startReceiver();
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
    device = (
      await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, {
        name: 'Kiosk 7',
        kind: 'device',
        sandbox: true,
      })
    ).body.sourceGuid;
    dispatcher = webhookDispatcher(h.deps, { allowPrivate: true, random: () => 0.5, timeoutMs: 2000 });
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
  });

  async function configure(path = '') {
    const r = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      paymentWebhook: `${rx.url}/payment${path}`,
      scheduleWebhook: `${rx.url}/schedule${path}`,
      voidWebhook: `${rx.url}/void${path}`,
    });
    // A new URL gets a new secret (shown once); the same URL again keeps the secret it has.
    secrets = {
      ...secrets,
      ...Object.fromEntries(
        Object.entries(r.body.webhookSecrets ?? {}).map(([k, v]) => [k, (v as { secret: string }).secret]),
      ),
    };
    rx.secrets = Object.values(secrets);
  }
  const pay = async (over: Record<string, unknown> = {}) =>
    (await h.request('POST', '/v1/External/Charge', chargeBody(h, over), { authorization: device })).body;
  const advance = (ms: number) => h.clock.set(new Date(h.clock.now.getTime() + ms).toISOString());
  const deliveriesOf = async (status?: string) =>
    (await h.admin('GET', `/orgs/${h.org.orgGuid}/deliveries?limit=1000${status ? `&status=${status}` : ''}`))
      .body.deliveries;

  afterEach(async () => {
    // Each test starts clean: removing the endpoints removes their deliveries too.
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      paymentWebhook: null,
      scheduleWebhook: null,
      voidWebhook: null,
    });
    rx.respond = () => 200;
    rx.received.length = 0;
    h.clock.set(new Date().toISOString());
  });

  it('sends all three webhooks signed per Standard Webhooks, with payloads in the interface spelling', async () => {
    await configure();
    const p = await pay();
    const s = await h.request(
      'POST',
      '/v1/External/SchedulePayment',
      chargeBody(h, {
        uniqueTransactionId: randomUUID(),
        amount: undefined,
        scheduleDetails: {
          frequencyID: 'Weekly',
          startDate: new Intl.DateTimeFormat('en-CA', { timeZone: 'America/New_York' }).format(h.clock.now),
          totalPaymentsCount: 3,
          amountPerPayment: 10,
        },
      }),
      { authorization: device },
    );
    expect(s.body.paymentStatus).toBe('Success');
    await h.request(
      'POST',
      '/v1/External/VoidPayment',
      { orgGUID: h.org.orgGuid, receiptNum: p.receiptNum },
      keyAuth(h),
    );
    expect(await dispatcher.drain()).toBe(4); // two payments (charge + first instalment), a schedule, a void
    expect(rx.received).toHaveLength(4);
    for (const r of rx.received) {
      expect(r.verified, r.path).toBe(true);
      expect(r.headers['webhook-id']).toMatch(/^msg_[0-9a-f]{32}$/);
      expect(Math.abs(Number(r.headers['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(60);
      const schema =
        r.path === '/payment' ? paymentWebhook : r.path === '/schedule' ? scheduleWebhook : voidWebhook;
      expect(schema.strict().safeParse(JSON.parse(r.body)).success, r.path).toBe(true);
    }
    const v = rx.received.find((r) => r.path === '/void')!;
    expect(JSON.parse(v.body)).toMatchObject({
      paymentNumber: p.receiptNum,
      paymentStatus: 'Voided',
      orgGuid: h.org.orgGuid,
    });
    const paid = rx.received.filter((r) => r.path === '/payment').map((r) => JSON.parse(r.body));
    expect(paid.map((b) => b.paymentNumber)).toContain(p.receiptNum);
    expect(paid.every((b) => b.deviceName === 'Kiosk 7')).toBe(true);
    // A signature made with another secret does not verify.
    rx.secrets = [`whsec_${Buffer.from('not the secret at all!!').toString('base64')}`];
    await pay();
    await dispatcher.drain();
    expect(rx.received.at(-1)!.verified).toBe(false);
    rx.secrets = Object.values(secrets);
  });

  it('retries on the schedule with the same webhook-id until a 2xx, recording each attempt', async () => {
    await configure();
    rx.respond = (_r, n) => (n < 2 ? 500 : 200);
    await pay();
    await dispatcher.drain();
    const [d] = await deliveriesOf('pending');
    expect(d).toMatchObject({ attempts: 1, lastStatusCode: 500 });
    const first = Date.parse(d.nextAttemptAt) - h.clock.now.getTime();
    expect(first).toBe(RETRY_DELAYS_SECONDS[0] * 1000); // random 0.5 → no jitter offset
    advance(first);
    await dispatcher.drain();
    const [d2] = await deliveriesOf('pending');
    expect(Date.parse(d2.nextAttemptAt) - h.clock.now.getTime()).toBe(RETRY_DELAYS_SECONDS[1] * 1000);
    advance(RETRY_DELAYS_SECONDS[1] * 1000);
    await dispatcher.drain();
    expect(new Set(rx.received.map((r) => r.webhookId)).size).toBe(1);
    expect(rx.received.map((r) => r.status)).toEqual([500, 500, 200]);
    const delivered = (await deliveriesOf('delivered')).find((x: { id: number }) => x.id === d.id);
    expect(delivered.attempts).toBe(3);
    const attempts = (await h.admin('GET', `/orgs/${h.org.orgGuid}/deliveries/${d.id}/attempts`)).body
      .attempts;
    expect(attempts.map((a: { statusCode: number }) => a.statusCode)).toEqual([500, 500, 200]);
    expect(attempts.every((a: { latencyMs: number }) => a.latencyMs >= 0)).toBe(true);
  });

  it('honours Retry-After, does not follow redirects, and gives up on a hung receiver after the timeout', async () => {
    await configure();
    rx.respond = () => ({ status: 429, headers: { 'retry-after': '3600' } });
    await pay();
    await dispatcher.drain();
    let [d] = await deliveriesOf('pending');
    expect(Date.parse(d.nextAttemptAt) - h.clock.now.getTime()).toBe(3_600_000);
    rx.respond = () => ({ status: 302, headers: { location: `${rx.url}/elsewhere` } });
    advance(3_600_000);
    await dispatcher.drain();
    expect(rx.received.map((r) => r.path)).not.toContain('/elsewhere');
    [d] = await deliveriesOf('pending');
    expect(d.lastStatusCode).toBe(302);
    rx.respond = () => ({ status: 200, hangMs: 3000 });
    advance(RETRY_DELAYS_SECONDS[1] * 1000);
    await dispatcher.drain();
    [d] = await deliveriesOf('pending');
    expect(d.lastError).toMatch(/no answer within 2 s/);
  });

  it('dead-letters after the last attempt (about three days), then replays by id and by time with the same webhook-id', async () => {
    await configure();
    rx.respond = () => 503;
    await pay();
    let elapsed = 0;
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await dispatcher.drain();
      const [p] = await deliveriesOf('pending');
      if (!p) break;
      const wait = Date.parse(p.nextAttemptAt) - h.clock.now.getTime();
      elapsed += wait;
      advance(wait);
    }
    expect(elapsed / 86_400_000).toBeGreaterThan(3);
    const [dead] = await deliveriesOf('dead');
    expect(dead.attempts).toBe(MAX_ATTEMPTS);
    expect(rx.received).toHaveLength(MAX_ATTEMPTS);
    rx.respond = () => 200;
    expect((await h.admin('POST', `/orgs/${h.org.orgGuid}/deliveries/${dead.id}/replay`)).body.replayed).toBe(
      1,
    );
    await dispatcher.drain();
    expect(rx.received.at(-1)).toMatchObject({ webhookId: dead.webhookId, status: 200 });
    // Replay everything failed since a time.
    rx.respond = () => 503;
    const since = new Date(h.clock.now.getTime() - 1000).toISOString();
    await pay();
    for (let i = 0; i < MAX_ATTEMPTS; i++) {
      await dispatcher.drain();
      const [p] = await deliveriesOf('pending');
      if (!p) break;
      advance(Date.parse(p.nextAttemptAt) - h.clock.now.getTime());
    }
    rx.respond = () => 200;
    const r = await h.admin('POST', `/orgs/${h.org.orgGuid}/deliveries/replay`, { failedSince: since });
    expect(r.body.replayed).toBe(1);
    await dispatcher.drain();
    expect(await deliveriesOf('dead')).toHaveLength(0);
  });

  it('410 Gone disables the endpoint with an admin event; setting the URL again re-enables it', async () => {
    await configure('/gone');
    rx.respond = () => 410;
    await pay();
    await dispatcher.drain();
    expect((await deliveriesOf('dead'))[0].lastStatusCode).toBe(410);
    const org = (await h.admin('GET', `/orgs/${h.org.orgGuid}`)).body;
    expect(org.webhooks.find((w: { kind: string }) => w.kind === 'payment').disabled).toBe(true);
    const events = (await h.admin('GET', `/orgs/${h.org.orgGuid}/events`)).body.events;
    expect(events[0]).toMatchObject({ kind: 'webhook_endpoint_disabled', detail: { kind: 'payment' } });
    rx.received.length = 0;
    await pay();
    await dispatcher.drain();
    expect(rx.received).toHaveLength(0);
    await configure();
    rx.respond = () => 200;
    await pay();
    await dispatcher.drain();
    expect(rx.received).toHaveLength(1);
  });

  it('an endpoint failing for 5 days without a success is disabled', async () => {
    await configure();
    rx.respond = () => 500;
    for (let day = 0; day <= 5; day++) {
      await pay();
      await dispatcher.drain();
      advance(86_400_000 + 1000);
    }
    await dispatcher.drain();
    const org = (await h.admin('GET', `/orgs/${h.org.orgGuid}`)).body;
    expect(org.webhooks.find((w: { kind: string }) => w.kind === 'payment').disabled).toBe(true);
    await configure();
  });

  it('rotation: the old secret keeps signing beside the new one for 24 hours', async () => {
    await configure();
    const old = secrets.payment!;
    const rotated = (await h.admin('POST', `/orgs/${h.org.orgGuid}/webhooks/payment/rotate`)).body;
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(Date.parse(rotated.previousSecretValidUntil) - h.clock.now.getTime()).toBe(24 * 3_600_000);
    const verifies = async (secret: string) => {
      rx.secrets = [secret];
      rx.received.length = 0;
      await pay();
      await dispatcher.drain();
      return rx.received[0]!.verified;
    };
    expect(await verifies(old)).toBe(true);
    expect(await verifies(rotated.secret)).toBe(true);
    expect(rx.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    advance(24 * 3_600_000 + 1000);
    expect(await verifies(old)).toBe(false);
    expect(await verifies(rotated.secret)).toBe(true);
    expect(rx.received[0]!.headers['webhook-signature']!.split(' ')).toHaveLength(1);
  });

  it('chaos: 30 % random failures and a down window; every event delivered, each webhook-id accepted once, none dead', async () => {
    await configure();
    let seed = 42;
    const rand = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    let down = false;
    rx.respond = () => (down || rand() < 0.3 ? 500 : 200);
    const n = kind === 'postgres' ? 120 : 80;
    const receipts: string[] = [];
    for (let i = 0; i < n; i++) {
      if (i === n / 2) down = true;
      receipts.push((await pay()).receiptNum);
      if (i % 10 === 0) await dispatcher.runOnce();
    }
    await dispatcher.drain();
    down = false;
    for (let round = 0; round < MAX_ATTEMPTS * 2; round++) {
      const pending = await deliveriesOf('pending');
      if (pending.length === 0) break;
      const next = Math.min(...pending.map((p: { nextAttemptAt: string }) => Date.parse(p.nextAttemptAt)));
      h.clock.set(new Date(Math.max(next, h.clock.now.getTime())).toISOString());
      await dispatcher.drain();
    }
    expect(await deliveriesOf('dead')).toHaveLength(0);
    expect(await deliveriesOf('pending')).toHaveLength(0);
    const accepted = rx.accepted();
    expect(accepted.size).toBe(n);
    expect([...accepted.values()].every((c) => c === 1)).toBe(true);
    const delivered = new Set(
      rx.received.filter((r) => r.status === 200).map((r) => JSON.parse(r.body).paymentNumber as string),
    );
    expect(receipts.every((r) => delivered.has(r))).toBe(true);
    expect(rx.received.every((r) => r.verified)).toBe(true);
  });
});

describe('SSRF guard', () => {
  it('refuses loopback targets unless private addresses are allowed, before any request is sent', async () => {
    const h = await createHarness('pglite');
    const rx = await startReceiver();
    try {
      const device = (
        await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, { name: 'K', kind: 'device', sandbox: true })
      ).body.sourceGuid;
      const host = rx.url.replace('127.0.0.1', 'localhost');
      // https:// (as required without WEBHOOK_ALLOW_PRIVATE): refused at the DNS answer, before connecting.
      const secureHost = host.replace('http://', 'https://');
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: `${secureHost}/p` });
      await h.request('POST', '/v1/External/Charge', chargeBody(h), { authorization: device });
      const strict = webhookDispatcher(h.deps, { allowPrivate: false });
      await strict.drain();
      expect(rx.received).toHaveLength(0);
      const [d] = (await h.admin('GET', `/orgs/${h.org.orgGuid}/deliveries`)).body.deliveries;
      expect(d.lastError).toMatch(/^blocked: .*non-public address/);
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: `https://10.1.2.3/p` });
      await h.request('POST', '/v1/External/Charge', chargeBody(h), { authorization: device });
      await strict.drain();
      const [d2] = (await h.admin('GET', `/orgs/${h.org.orgGuid}/deliveries`)).body.deliveries;
      expect(d2.lastError).toMatch(/^blocked: 10\.1\.2\.3/);
      h.clock.set(new Date(Date.now() + 3_600_000).toISOString());
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: `${host}/p` });
      await webhookDispatcher(h.deps, { allowPrivate: true }).drain();
      expect(rx.received.length).toBeGreaterThan(0);
    } finally {
      await rx.close();
      await h.close();
    }
  });
});
