/**
 * Keyed fingerprints of payment instruments: the same card (or bank account) gives the same
 * fingerprint, so attempts and declines can be counted per card across an organisation, and the
 * idempotency request hash can compare "the same card" without the number or the CVV.
 *
 * HMAC-SHA-256 under a key derived with HKDF from an installation key that the database keeps
 * sealed under the server's key-encryption key (never a plain hash: a card number has too little
 * entropy for an unkeyed hash; and a dump alone does not yield the key, so it cannot brute-force a
 * number back from a fingerprint). The installation key is re-sealed by `secrets rewrap`, so
 * fingerprints stay the same across a KEK rotation. The CVV is never an input.
 */
import { createHmac, hkdfSync } from 'node:crypto';
import type { Deps } from '../deps.ts';
import type { Instrument } from '../gateway/gateway.ts';
import { kekOf } from '../gateway/registry.ts';
import { KEK_SUBKEY_SALT } from '../secrets/key-encryption.ts';

/** HKDF `info` of the fingerprint key (a new version gives unrelated fingerprints). */
export const FINGERPRINT_KEY_INFO = 'kupah/instrument-fingerprint/v1';

/** The fingerprint key derived from 32 bytes of key material (HKDF-SHA-256). */
export function deriveFingerprintKey(kekMaterial: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', kekMaterial, KEK_SUBKEY_SALT, FINGERPRINT_KEY_INFO, 32));
}

/** Digits and letters only, lower case: `4242 4242-4242 4242` and `4242424242424242` are one card. */
const normalise = (value: string): string => value.replace(/[\s-]/g, '').toLowerCase();

export interface Fingerprints {
  /** A card number, or a charity card number or token. */
  card(number: string): string;
  /** An ACH account: routing and account number together. */
  bank(routingNum: string, accountNum: string): string;
}

export function fingerprints(key: Buffer): Fingerprints {
  const mac = (domain: string, value: string) =>
    `fp1_${createHmac('sha256', key).update(`${domain}\u0000${value}`).digest('base64url')}`;
  return {
    card: (number) => mac('card', normalise(number)),
    bank: (routingNum, accountNum) => mac('bank', `${normalise(routingNum)}:${normalise(accountNum)}`),
  };
}

const byDeps = new WeakMap<Deps, Fingerprints>();

/**
 * The fingerprints of this installation. The key, in order: `deps.fingerprintKey` (derived from
 * the sealed installation key where the server starts), or derived from the KEK of the gateway
 * registry (its `deriveKey`; tests that build their own dependencies). Without a KEK at all
 * (tests and benchmarks with a static registry) it is derived from the installation's request-hash
 * secret, with a warning: that secret lives in the database, so those fingerprints do not resist a
 * database dump.
 */
export function fingerprintsOf(deps: Deps): Fingerprints {
  let fp = byDeps.get(deps);
  if (fp) return fp;
  let key = deps.fingerprintKey ?? null;
  if (!key) {
    const kek = kekOf(deps.gateways);
    if (kek) key = kek.deriveKey(FINGERPRINT_KEY_INFO);
  }
  if (!key) {
    deps.logger.warn(
      'instrument fingerprints are keyed from the database-held installation secret (no key-encryption key given)',
    );
    key = deriveFingerprintKey(Buffer.from(deps.requestHashKey, 'utf8'));
  }
  fp = fingerprints(key);
  byDeps.set(deps, fp);
  return fp;
}

/** The fingerprint of a gateway instrument; null for a card-on-file token (nothing to test). */
export function instrumentFingerprint(fp: Fingerprints, instrument: Instrument): string | null {
  if ('token' in instrument) return null;
  if ('card' in instrument) return fp.card(instrument.card.pan);
  if ('bank' in instrument) return fp.bank(instrument.bank.routingNum, instrument.bank.accountNum);
  return fp.card(instrument.charity.number);
}
