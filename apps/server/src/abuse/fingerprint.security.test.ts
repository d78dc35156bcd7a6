/**
 * Card fingerprints are keyed by a sub-key of the server's key-encryption key (HKDF), so the
 * fingerprints and request hashes in a database dump cannot be brute-forced back to card numbers
 * with anything the dump holds.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '../db/database.ts';
import { sealedInstallationKey } from '../db/server-state.ts';
import type { Deps } from '../deps.ts';
import { createGatewayRegistry, staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { countSealedSecretsByKek, prepareRewrap } from '../secrets/at-rest.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
import { createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { deriveFingerprintKey, fingerprints, fingerprintsOf } from './fingerprint.ts';

const PAN = '4242424242424242';
const requestHashKey = randomBytes(32).toString('hex');
const depsWith = (gateways: Deps['gateways'], extra: Partial<Deps> = {}) =>
  ({ gateways, logger: pino({ level: 'silent' }), requestHashKey, ...extra }) as unknown as Deps;
const fallback = () => fingerprints(deriveFingerprintKey(Buffer.from(requestHashKey, 'utf8')));

describe('instrument fingerprints', () => {
  it('the server (a registry with its KEK) keys them with an HKDF sub-key of the KEK, not the KEK itself', () => {
    const material = randomBytes(32);
    const kek = keyEncryptionKey(material);
    const registry = createGatewayRegistry({ db: {} as Db, sandbox: sandboxGateway(), kek });
    const fp = fingerprintsOf(depsWith(registry));
    expect(fp.card(PAN)).toBe(fingerprints(deriveFingerprintKey(material)).card(PAN));
    expect(fp.card(PAN)).not.toBe(fingerprints(material).card(PAN));
    expect(fp.card(PAN)).not.toBe(fallback().card(PAN));
    expect(fp.card(PAN)).not.toContain(PAN);
    // The same card however it is typed; another card or account differs.
    expect(fp.card('4242 4242-4242 4242')).toBe(fp.card(PAN));
    expect(fp.card('4111111111111111')).not.toBe(fp.card(PAN));
    expect(fp.bank('021000021', '000123456789')).not.toBe(fp.bank('021000021', '000123456780'));
  });

  it("keys them with the running KEK's current key: another KEK, or the previous key, gives other fingerprints", () => {
    const current = randomBytes(32);
    const previous = randomBytes(32);
    const running = fingerprintsOf(
      depsWith(
        createGatewayRegistry({
          db: {} as Db,
          sandbox: sandboxGateway(),
          kek: keyEncryptionKey(current, previous),
        }),
      ),
    );
    expect(running.card(PAN)).toBe(fingerprints(deriveFingerprintKey(current)).card(PAN));
    expect(running.card(PAN)).not.toBe(fingerprints(deriveFingerprintKey(previous)).card(PAN));
    const other = fingerprintsOf(
      depsWith(
        createGatewayRegistry({
          db: {} as Db,
          sandbox: sandboxGateway(),
          kek: keyEncryptionKey(randomBytes(32)),
        }),
      ),
    );
    expect(other.card(PAN)).not.toBe(running.card(PAN));
  });

  it('an explicit key (derived where the server starts) comes first', () => {
    const key = deriveFingerprintKey(randomBytes(32));
    const fp = fingerprintsOf(depsWith(staticGatewayRegistry(sandboxGateway()), { fingerprintKey: key }));
    expect(fp.card(PAN)).toBe(fingerprints(key).card(PAN));
  });
});

describe.each(await testDatabases())('the fingerprint key of an installation on %s', (kind) => {
  let h: Harness;
  beforeAll(async () => {
    h = await createHarness(kind);
  });
  afterAll(async () => {
    await h?.close();
  });

  const oldKekMaterial = randomBytes(32);
  it('is kept sealed under the KEK and survives a KEK rotation (rewrap), so fingerprints and request hashes stay the same', async () => {
    const oldKek = keyEncryptionKey(oldKekMaterial);
    const key = await sealedInstallationKey(h.db, oldKek, 'fingerprint_key');
    // Shared: a second instance (or a restart) gets the same key.
    expect(await sealedInstallationKey(h.db, oldKek, 'fingerprint_key')).toEqual(key);
    const [row] = await h.db.query<{ v: string }>(
      `SELECT value #>> '{}' AS v FROM server_state WHERE key = 'fingerprint_key'`,
    );
    expect(row!.v).toMatch(/^kek1\./);
    expect(row!.v).not.toContain(key.toString('base64'));
    expect(await countSealedSecretsByKek(h.db)).toMatchObject({ [oldKek.id]: 1 });

    // Rotation: the new key with the old one as previous; rewrap; then the new key alone.
    const newMaterial = randomBytes(32);
    const rotating = keyEncryptionKey(newMaterial, randomBytes(32));
    await expect(
      h.db.transaction(async (tx) => (await prepareRewrap(tx, rotating)).unreadable.size),
    ).resolves.toBe(1); // sealed under a key it does not hold: nothing is written
    const withPrevious = keyEncryptionKey(newMaterial, oldKekMaterial);
    await h.db.transaction(async (tx) => {
      const r = await prepareRewrap(tx, withPrevious);
      expect(r.unreadable.size).toBe(0);
      await r.apply();
    });
    const after = keyEncryptionKey(newMaterial);
    expect(await sealedInstallationKey(h.db, after, 'fingerprint_key')).toEqual(key);
    expect(await countSealedSecretsByKek(h.db)).toMatchObject({ [after.id]: 1 });
    await expect(sealedInstallationKey(h.db, oldKek, 'fingerprint_key')).rejects.toThrow(
      /neither the current key/,
    );
  });
});
