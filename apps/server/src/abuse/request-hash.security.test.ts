/**
 * The idempotency request hash is kept 30 days with its HMAC key in the same database, beside the
 * payment's last 4, brand and expiry. An attacker with a dump must not be able to try the 1,000
 * CVVs (or the card numbers that fit the last 4) against it.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { chargeRequest } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalJson, commandHash } from '../http/request-hash.ts';
import { chargeBody, createHarness, type Harness, sourceAuth, testDatabases } from '../testing/harness.ts';
import { deriveFingerprintKey, fingerprints, fingerprintsOf } from './fingerprint.ts';

describe.each(await testDatabases())('request hash without card secrets on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
    h.deps.fingerprintKey = deriveFingerprintKey(randomBytes(32));
  });
  afterAll(async () => {
    await h?.close();
  });

  const cvvs = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
  const stolen = async (key: string) => {
    const [row] = await h.db.query<{ request_hash: string }>(
      'SELECT request_hash FROM idempotency_keys WHERE key = $1',
      [key],
    );
    const [secret] = await h.db.query<{ value: string }>(
      `SELECT value #>> '{}' AS value FROM server_state WHERE key = 'request_hash_key'`,
    );
    return { hash: row!.request_hash, hmacKey: secret!.value };
  };

  it('the 1,000 CVVs tried against the stored hash with its key from the database: nothing tells the right one', async () => {
    const body = chargeBody(h, { card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '737' } });
    const r = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(r.body.paymentStatus).toBe('Success');
    const { hash, hmacKey } = await stolen(body.uniqueTransactionId as string);

    const withCvv = (cvv: string) => ({ ...body, card: { ...(body.card as object), cvv } });
    // The attack on the old hash (HMAC of the whole body): no CVV reproduces it any more.
    const hmac = (v: unknown) => createHmac('sha256', hmacKey).update(canonicalJson(v)).digest('hex');
    expect(cvvs.filter((cvv) => hmac(withCvv(cvv)) === hash)).toEqual([]);
    // Even the attacker who also had the fingerprint key learns nothing: every CVV gives the same hash.
    const fp = fingerprintsOf(h.deps);
    const all = new Set(cvvs.map((cvv) => commandHash(chargeRequest.parse(withCvv(cvv)), hmacKey, fp)));
    expect([...all]).toEqual([hash]);
    // Without the fingerprint key (derived from the KEK, never stored), the card number cannot be
    // tried either: the key an attacker could derive from the database gives another hash.
    const guessed = fingerprints(deriveFingerprintKey(Buffer.from(hmacKey, 'utf8')));
    expect(commandHash(chargeRequest.parse(body), hmacKey, guessed)).not.toBe(hash);
    const stored = JSON.stringify(await h.db.query('SELECT * FROM idempotency_keys'));
    expect(stored).not.toContain('4242424242424242');
  });

  it('a retry with the same card replays (whatever the CVV); with another card it is 409', async () => {
    const body = chargeBody(h, { card: { ccNum: '4242 4242 4242 4242', expiry: '12/30', cvv: '123' } });
    const first = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(first.body.paymentStatus).toBe('Success');
    const sameCard = await h.request(
      'POST',
      '/v1/External/Charge',
      { ...body, card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '999' } },
      sourceAuth(h),
    );
    expect(sameCard.status).toBe(200);
    expect(sameCard.body).toEqual(first.body);
    const otherCard = await h.request(
      'POST',
      '/v1/External/Charge',
      { ...body, card: { ccNum: '4111111111111111', expiry: '12/30', cvv: '123' } },
      sourceAuth(h),
    );
    expect(otherCard.status).toBe(409);
    expect(otherCard.body.error.errorCode).toBe('DUPLICATE_TRANSACTION');
    const [{ n }] = (await h.db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM payments WHERE unique_transaction_id = $1',
      [body.uniqueTransactionId],
    )) as [{ n: number }];
    expect(n).toBe(1);
  });

  it('an ACH account number is not an input either: another account is 409, the same replays', async () => {
    const ach = (accountNum: string) =>
      chargeBody(h, {
        paymentMethodId: 'ACH',
        card: undefined,
        bankAccount: { accountNum, routingNum: '021000021', accountType: 'Checking', nameOnAccount: 'D W' },
      });
    const body = ach('000123456789');
    const first = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(first.status).toBe(200);
    const { hash, hmacKey } = await stolen(body.uniqueTransactionId as string);
    const hmac = (v: unknown) => createHmac('sha256', hmacKey).update(canonicalJson(v)).digest('hex');
    expect(hmac(body)).not.toBe(hash);
    const again = await h.request('POST', '/v1/External/Charge', body, sourceAuth(h));
    expect(again.body).toEqual(first.body);
    const other = { ...ach('000999456789'), uniqueTransactionId: body.uniqueTransactionId };
    expect((await h.request('POST', '/v1/External/Charge', other, sourceAuth(h))).status).toBe(409);
  });
});
