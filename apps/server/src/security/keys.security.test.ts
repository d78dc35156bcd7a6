/**
 * Keys and secrets at rest, per-organisation envelope keys and their signatures, webhook secrets.
 * Each test plays the attacker: a database dump, a device of another organisation, a swapped key.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { generateEnvelopeKeyPair, verifyEnvelopeKey } from '@kupah/envelope';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import { createAdminApp } from '../app.ts';
import { createGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import { ADMIN_TOKEN, createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { startReceiver } from '../testing/receiver.ts';
import { webhookDispatcher } from '../webhooks/dispatcher.ts';

const chargeReq = (ccNum = '4242424242424242') => ({
  amount: 18,
  currency: 'USD',
  paymentMethodId: 'Credit_Card',
  card: { ccNum, expiry: '12/30', cvv: '123' },
});

describe.each(await testDatabases())('keys and secrets on %s', (kind) => {
  let h: Harness;
  let other: { orgGuid: string; id: number };
  let a: TestDevice;
  let b: TestDevice;
  const kek = keyEncryptionKey(randomBytes(32));

  const orgId = async (guid: string) =>
    Number((await h.db.query<{ id: string }>('SELECT id FROM orgs WHERE guid = $1', [guid]))[0]!.id);
  const rowsOf = async (table: string) =>
    (await h.db.query<{ j: unknown }>(`SELECT row_to_json(t) AS j FROM ${table} t`)).map((r) =>
      JSON.stringify(r.j),
    );

  beforeAll(async () => {
    h = await createHarness(kind, {
      gateways: (db) => createGatewayRegistry({ db, sandbox: sandboxGateway(), kek }),
    });
    const created = await createOrg(h.db, 'Other Org');
    other = { orgGuid: created.orgGuid, id: await orgId(created.orgGuid) };
    a = await pairTestDevice(h, 'Org A kiosk');
    b = await pairTestDevice({ ...h, org: created }, 'Org B kiosk');
  });
  afterAll(async () => {
    await h?.close();
  });

  it('each organisation has its own envelope key: a box sealed for org A does not open for org B', async () => {
    expect(a.key.kid).not.toBe(b.key.kid);
    // Org B's device (or an attacker holding its credential) replays a box sealed under A's key.
    const stolen = await sealedOp({ deviceId: b.deviceId, key: a.key }, 'charge', chargeReq());
    const r = await b.push([stolen]);
    expect(r.status).toBe(200);
    expect(r.body.results[0]).toMatchObject({ status: 'Error', retryable: false });
    expect(r.body.results[0].error.errorCode).toBe('ENVELOPE_UNKNOWN_KEY');
    const paid = await h.db.query('SELECT id FROM payments WHERE unique_transaction_id = $1', [stolen.opId]);
    expect(paid).toHaveLength(0);
    // Under its own organisation's key it goes through.
    const own = await sealedOp(b, 'charge', chargeReq());
    expect((await b.push([own])).body.results[0].status).toBe('Success');
    const keys = await h.db.query<{ kid: string; org_id: string }>('SELECT kid, org_id FROM envelope_keys');
    expect(keys.find((k) => k.kid === b.key.kid)?.org_id).toEqual(expect.anything());
    expect(Number(keys.find((k) => k.kid === b.key.kid)!.org_id)).toBe(other.id);
  });

  it('every key handed out is signed for its organisation by the key pinned at pairing', async () => {
    const pinA = a.pairing.signingKey;
    const pinB = b.pairing.signingKey;
    expect(pinA).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(pinA).not.toHaveProperty('d');
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, a.key)).toBe(true);
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, a.pairing.pull.encryptionKey)).toBe(true);
    // Not for another organisation, not under another organisation's pin.
    expect(await verifyEnvelopeKey(pinA, other.orgGuid, a.key)).toBe(false);
    expect(await verifyEnvelopeKey(pinB, h.org.orgGuid, a.key)).toBe(false);
    // An attacker's key with A's signature, or no signature, does not verify.
    const evil = await generateEnvelopeKeyPair();
    const swapped = { kid: a.key.kid, jwk: evil.publicJwk, sig: a.key.sig };
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, swapped)).toBe(false);
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, { kid: a.key.kid, jwk: a.key.jwk })).toBe(false);
    // Pull and push answers carry signed keys too.
    const pulled = await a.pull();
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, pulled.body.encryptionKey)).toBe(true);
    const pushed = await a.push([await sealedOp(a, 'charge', chargeReq())]);
    expect(await verifyEnvelopeKey(pinA, h.org.orgGuid, pushed.body.encryptionKey)).toBe(true);
  });

  it('a dump holds no private key in clear; retiring a key destroys its private part', async () => {
    for (const table of ['envelope_keys', 'signing_keys']) {
      const rows = await rowsOf(table);
      expect(rows.length).toBeGreaterThan(0);
      for (const row of rows) expect(row).not.toMatch(/"d"\s*:/);
    }
    const sealed = await h.db.query<{ private_sealed: string | null }>(
      'SELECT private_sealed FROM envelope_keys WHERE retired_at IS NULL',
    );
    for (const r of sealed) expect(r.private_sealed).toMatch(/^kek1\./);

    const oldKid = a.key.kid;
    const rotated = await h.admin('POST', '/envelope-keys/rotate');
    expect(rotated.status).toBe(201);
    expect(rotated.body.rotated).toHaveLength(2); // both organisations
    const empty = { depth: 0, totalMinor: 0, byKid: {} };
    const nothing = await sealedOp(a, 'saveDonor', { donorID: '', firstName: 'Queue', lastName: 'Empty' });
    expect((await a.push([nothing], empty)).status).toBe(200);
    const queuedUnderOld = await sealedOp(a, 'charge', chargeReq());
    expect((await h.admin('POST', `/envelope-keys/${oldKid}/retire`)).status).toBe(200);
    const [gone] = await h.db.query<{ private_jwk: unknown; private_sealed: unknown; retired_at: unknown }>(
      'SELECT private_jwk, private_sealed, retired_at FROM envelope_keys WHERE kid = $1',
      [oldKid],
    );
    expect(gone).toMatchObject({ private_jwk: null, private_sealed: null });
    expect(gone!.retired_at).not.toBeNull();
    // Nothing sealed under it opens any more: the private part is gone, not merely hidden.
    const late = await a.push([queuedUnderOld]);
    expect(late.body.results[0].error.errorCode).toBe('ENVELOPE_UNKNOWN_KEY');
  });

  it('a shared key and a clear webhook secret of an earlier version are sealed at first use and by rewrap', async () => {
    // As an earlier version stored them: one key for every organisation, private part in clear.
    const legacy = await generateEnvelopeKeyPair();
    await h.db.query(
      'INSERT INTO envelope_keys (kid, public_jwk, private_jwk, created_at) VALUES ($1, $2::jsonb, $3::jsonb, $4)',
      [
        legacy.kid,
        JSON.stringify(legacy.publicJwk),
        JSON.stringify(legacy.privateJwk),
        '2020-01-01T00:00:00Z',
      ],
    );
    // A terminal still holds an item sealed under the shared key: it opens.
    const held = await sealedOp(
      { deviceId: a.deviceId, key: { kid: legacy.kid, jwk: legacy.publicJwk } },
      'charge',
      chargeReq(),
    );
    const r = await a.push([held]);
    expect(r.body.results[0].status).toBe('Success');
    // The shared key is never handed out again.
    expect(r.body.encryptionKey.kid).not.toBe(legacy.kid);
    // Sealed when it was loaded.
    const [row] = await h.db.query<{ private_jwk: unknown; private_sealed: string }>(
      'SELECT private_jwk, private_sealed FROM envelope_keys WHERE kid = $1',
      [legacy.kid],
    );
    expect(row!.private_jwk).toBeNull();
    expect(row!.private_sealed).toMatch(/^kek1\./);

    // A webhook secret stored in clear by an earlier version is sealed by rewrap.
    const clearSecret = `whsec_${randomBytes(24).toString('base64')}`;
    await h.db.query(
      `INSERT INTO webhook_endpoints (org_id, kind, url, secret) VALUES ($1, 'void', 'https://example.org/v', $2)`,
      [other.id, clearSecret],
    );
    const before = await h.admin('GET', '/secrets');
    const rewrap = await h.admin('POST', '/secrets/rewrap');
    expect(rewrap.status).toBe(200);
    expect(rewrap.body.rewrapped).toBeGreaterThanOrEqual(1);
    expect(rewrap.body.sealed).toBe(before.body.sealed + 1);
    expect(rewrap.body.underCurrent).toBe(rewrap.body.sealed);
    const [w] = await h.db.query<{ secret: string }>(
      `SELECT secret FROM webhook_endpoints WHERE org_id = $1 AND kind = 'void'`,
      [other.id],
    );
    expect(w!.secret).toMatch(/^kek1\./);
    expect(kek.open(w!.secret, `webhook_endpoints:${other.id}:void`)).toBe(clearSecret);
    for (const row of await rowsOf('webhook_endpoints')) expect(row).not.toContain('whsec_');
    // A secret moved onto another organisation's row does not open there.
    expect(() => kek.open(w!.secret, `webhook_endpoints:${other.id + 1}:void`)).toThrow();
  });

  it('a new webhook URL gets a new secret (shown once), sealed at rest; deliveries are signed with it', async () => {
    const rx = await startReceiver();
    try {
      const first = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        paymentWebhook: `${rx.url}/a`,
      });
      const s1 = first.body.webhookSecrets.payment.secret as string;
      expect(s1).toMatch(/^whsec_/);
      // The same URL again: nothing new, and the secret is not shown again.
      const same = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        paymentWebhook: `${rx.url}/a`,
      });
      expect(same.body.webhookSecrets).toBeUndefined();
      // Pointing the endpoint elsewhere (an attacker with admin access to a settings screen, or a
      // receiver handed to someone else) does not carry the old receiver's secret over.
      const moved = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        paymentWebhook: `${rx.url}/b`,
      });
      const s2 = moved.body.webhookSecrets.payment.secret as string;
      expect(s2).toMatch(/^whsec_/);
      expect(s2).not.toBe(s1);
      for (const row of await rowsOf('webhook_endpoints')) {
        expect(row).not.toContain(s1);
        expect(row).not.toContain(s2);
      }
      // Deliveries are signed with the new secret only.
      const device = (
        await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, { name: 'K', kind: 'device', sandbox: true })
      ).body.sourceGuid;
      const charged = await h.request(
        'POST',
        '/v1/External/Charge',
        {
          orgGUID: h.org.orgGuid,
          amount: 5,
          paymentMethodId: 'Credit_Card',
          uniqueTransactionId: `tx-${randomUUID()}`,
          currency: 'USD',
          card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        },
        { authorization: device },
      );
      expect(charged.status).toBe(200);
      rx.secrets = [s2];
      await webhookDispatcher(h.deps, { allowPrivate: true }).drain();
      expect(rx.received.length).toBeGreaterThan(0);
      expect(rx.received.every((r) => r.verified)).toBe(true);
      // One signature: the old receiver's secret no longer signs anything.
      for (const r of rx.received) expect(r.headers['webhook-signature']!.split(' ')).toHaveLength(1);
      // A rotation's new secret is sealed too.
      const rotated = await h.admin('POST', `/orgs/${h.org.orgGuid}/webhooks/payment/rotate`);
      expect(rotated.body.secret).toMatch(/^whsec_/);
      for (const row of await rowsOf('webhook_endpoints')) expect(row).not.toContain('whsec_');
    } finally {
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: null });
      await rx.close();
    }
  });

  it('an http:// webhook URL is refused when it is configured (400 naming the field), unless WEBHOOK_ALLOW_PRIVATE=1', async () => {
    const strict = createAdminApp(h.deps, { adminToken: ADMIN_TOKEN });
    const patch = (body: Record<string, unknown>) =>
      strict.request(`/admin/orgs/${h.org.orgGuid}/settings`, {
        method: 'PATCH',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const refused = await patch({
      paymentWebhook: 'https://example.org/p',
      voidWebhook: 'http://example.org/v',
    });
    expect(refused.status).toBe(400);
    const body = (await refused.json()) as { error: { fields: { field: string; message: string }[] } };
    expect(body.error.fields).toEqual([
      { field: 'voidWebhook', message: expect.stringMatching(/https:\/\//) },
    ]);
    // Nothing of the refused change was written.
    expect((await h.admin('GET', `/orgs/${h.org.orgGuid}`)).body.webhooks).toEqual([]);
    const accepted = await patch({ paymentWebhook: 'https://example.org/p' });
    expect(accepted.status).toBe(200);
    await patch({ paymentWebhook: null });
  });

  it('webhooks go to https:// only, unless WEBHOOK_ALLOW_PRIVATE=1', async () => {
    const rx = await startReceiver();
    try {
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: 'http://8.8.8.8/p' });
      const device = (
        await h.admin('POST', `/orgs/${h.org.orgGuid}/sources`, { name: 'K2', kind: 'device', sandbox: true })
      ).body.sourceGuid;
      await h.request(
        'POST',
        '/v1/External/Charge',
        {
          orgGUID: h.org.orgGuid,
          amount: 6,
          paymentMethodId: 'Credit_Card',
          uniqueTransactionId: `tx-${randomUUID()}`,
          currency: 'USD',
          card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
        },
        { authorization: device },
      );
      await webhookDispatcher(h.deps, { allowPrivate: false }).drain();
      const [d] = (await h.admin('GET', `/orgs/${h.org.orgGuid}/deliveries`)).body.deliveries;
      expect(d.lastError).toMatch(/^blocked: webhook URLs must be https:\/\//);
      expect(d.lastStatusCode).toBeNull();
    } finally {
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, { paymentWebhook: null });
      await rx.close();
    }
  });
});
