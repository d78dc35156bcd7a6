/**
 * Card fingerprints are keyed by a sub-key of the server's key-encryption key (HKDF), so the
 * fingerprints and request hashes in a database dump cannot be brute-forced back to card numbers
 * with anything the dump holds.
 */
import { randomBytes } from 'node:crypto';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { Db } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { createGatewayRegistry, staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
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
