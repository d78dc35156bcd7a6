/**
 * The database-dump attacker: a realistic day (a terminal paired and pushing sealed card payments,
 * an integrator charging through the External API with a full card number and CVV, a webhook
 * configured and delivered, a Sola gateway key configured), then every row of every table of the
 * schema dumped as text. Nothing in it may open a card or impersonate the server: no full card
 * number, no CVV beside a card field, no webhook secret, no private key, no gateway key.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
import { pairTestDevice, sealedOp } from '../testing/device-client.ts';
import { createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { startReceiver } from '../testing/receiver.ts';
import { webhookDispatcher } from '../webhooks/dispatcher.ts';

const DEVICE_CARDS = ['4242424242424242', '5555555555554444'];
const API_CARD = '4111111111111111';
const CVVS = ['739', '842'];
const SOLA_KEY = `solakey_${randomBytes(12).toString('hex')}`;

async function dumpSchema(h: Harness): Promise<string> {
  const tables = await h.db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'
     ORDER BY table_name`,
    [h.schema],
  );
  expect(tables.length).toBeGreaterThan(10);
  const out: string[] = [];
  for (const { table_name } of tables) {
    const rows = await h.db.query<{ j: unknown }>(
      `SELECT row_to_json(t)::text AS j FROM "${h.schema}"."${table_name}" t`,
    );
    for (const r of rows) out.push(`${table_name}: ${String(r.j)}`);
  }
  return out.join('\n');
}

describe.each(await testDatabases())('a dump of the database on %s', (kind) => {
  let h: Harness;
  let dump: string;

  beforeAll(async () => {
    const kek = keyEncryptionKey(randomBytes(32));
    h = await createHarness(kind, {
      gateways: (db) => createGatewayRegistry({ db, sandbox: sandboxGateway(), kek }),
    });
    const rx = await startReceiver();
    try {
      // A webhook, delivered (plain HTTP to the loopback receiver: WEBHOOK_ALLOW_PRIVATE=1).
      const configured = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        paymentWebhook: `${rx.url}/payment`,
      });
      expect(configured.status).toBe(200);
      rx.secrets = [configured.body.webhookSecrets.payment.secret];

      // A terminal pushes sealed card charges.
      const device = await pairTestDevice(h, 'Lobby');
      const ops = await Promise.all(
        DEVICE_CARDS.map((ccNum, i) =>
          sealedOp(device, 'charge', {
            amount: 18 + i,
            currency: 'USD',
            paymentMethodId: 'Credit_Card',
            card: { ccNum, expiry: '12/30', cvv: CVVS[i] },
            donor: { firstName: 'Moshe', lastName: 'Cohen' },
          }),
        ),
      );
      const pushed = await device.push(ops);
      expect(pushed.status).toBe(200);
      expect(pushed.body.results.map((r: { status: string }) => r.status)).toEqual(['Success', 'Success']);

      // An integrator charges through the External API with a full card number and CVV.
      const charged = await h.request(
        'POST',
        '/v1/External/Charge',
        {
          orgGUID: h.org.orgGuid,
          amount: 36,
          paymentMethodId: 'Credit_Card',
          uniqueTransactionId: `tx-${randomUUID()}`,
          currency: 'USD',
          card: { ccNum: API_CARD, expiry: '11/31', cvv: CVVS[0] },
        },
        { authorization: h.org.sourceGuid },
      );
      expect(charged.status).toBe(200);
      expect(charged.body.paymentStatus).toBe('Success');

      // The organisation's Sola key (its production credentials would charge through it).
      const gateway = await h.admin('PUT', `/orgs/${h.org.orgGuid}/gateway`, {
        provider: 'sola',
        key: SOLA_KEY,
      });
      expect(gateway.status).toBe(200);

      // A key rotation and retirement, so that destroyed keys are in the dump too.
      const oldKid = device.key.kid;
      expect((await h.admin('POST', '/envelope-keys/rotate')).status).toBe(201);
      const nothing = await sealedOp(device, 'saveDonor', { donorID: '', firstName: 'Q', lastName: 'E' });
      expect((await device.push([nothing], { depth: 0, totalMinor: 0, byKid: {} })).status).toBe(200);
      expect((await h.admin('POST', `/envelope-keys/${oldKid}/retire`)).status).toBe(200);

      await webhookDispatcher(h.deps, { allowPrivate: true }).drain();
      expect(rx.received.length).toBeGreaterThan(0);
      expect(rx.received.every((r) => r.verified)).toBe(true);
    } finally {
      await rx.close();
    }
    dump = await dumpSchema(h);
  });
  afterAll(async () => {
    await h?.close();
  });

  it('holds no full card number', () => {
    for (const pan of [...DEVICE_CARDS, API_CARD]) {
      expect(dump).not.toContain(pan);
      // Nor spaced or dashed.
      expect(dump).not.toContain(pan.replace(/(\d{4})(?=\d)/g, '$1 '));
      expect(dump).not.toContain(pan.replace(/(\d{4})(?=\d)/g, '$1-'));
    }
  });

  it('holds no CVV beside a card field', () => {
    expect(dump).not.toMatch(/"(cvv|cvc|cvv2|cardCode|card_code|securityCode)"\s*:\s*"?\d{3,4}/i);
    for (const cvv of CVVS) expect(dump).not.toMatch(new RegExp(`cvv[^\\d]{0,12}${cvv}`, 'i'));
  });

  it('holds no webhook secret, no private key, no gateway key', () => {
    expect(dump).not.toContain('whsec_');
    expect(dump).not.toMatch(/"d"\s*:\s*"/);
    expect(dump).not.toContain(SOLA_KEY);
    // The sealed forms are there (so the rows were looked at, not missing).
    expect(dump).toMatch(/envelope_keys: .*"private_sealed":"kek1\./);
    expect(dump).toMatch(/signing_keys: .*"private_sealed":"kek1\./);
    expect(dump).toMatch(/webhook_endpoints: .*"secret":"kek1\./);
    expect(dump).toMatch(/org_gateways: .*"key_sealed":"kek1\./);
  });
});
