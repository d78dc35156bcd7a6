import { describe, expect, it } from 'vitest';
import { encodeBase64url } from './base64url.ts';
import { generateEnvelopeKeyPair } from './envelope.ts';
import {
  envelopeKeyStatement,
  generateSigningKeyPair,
  importSigningKey,
  signEnvelopeKey,
  verifyEnvelopeKey,
} from './signing.ts';

const ORG = '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b';

async function signedKey() {
  const signing = await generateSigningKeyPair();
  const pair = await generateEnvelopeKeyPair();
  const key = { kid: pair.kid, jwk: pair.publicJwk };
  return { signing, key: { ...key, sig: await signEnvelopeKey(signing.privateJwk, ORG, key) } };
}

describe('envelope key signatures', () => {
  it('a signed key verifies under the signing key, for its context only', async () => {
    const { signing, key } = await signedKey();
    expect(await verifyEnvelopeKey(signing.publicJwk, ORG, key)).toBe(true);
    expect(await verifyEnvelopeKey(signing.publicJwk, `${ORG}x`, key)).toBe(false);
    // An imported key signs the same way.
    const imported = await importSigningKey(signing.privateJwk);
    const again = { ...key, sig: await signEnvelopeKey(imported, ORG, key) };
    expect(await verifyEnvelopeKey(signing.publicJwk, ORG, again)).toBe(true);
  });

  it('an attacker cannot change the kid or the point, nor bring its own signature', async () => {
    const { signing, key } = await signedKey();
    const other = await generateEnvelopeKeyPair();
    const evil = await generateSigningKeyPair();
    const forged = [
      { ...key, kid: `${key.kid}x` },
      { ...key, jwk: { ...key.jwk, x: other.publicJwk.x } },
      { ...key, jwk: { ...key.jwk, y: other.publicJwk.y } },
      { ...key, jwk: other.publicJwk },
      { kid: key.kid, jwk: key.jwk },
      { ...key, sig: '' },
      { ...key, sig: 'not base64url!' },
      { ...key, sig: encodeBase64url(new Uint8Array(64)) },
      { ...key, sig: key.sig.slice(0, -4) },
      { ...key, sig: await signEnvelopeKey(evil.privateJwk, ORG, key) },
    ];
    for (const k of forged) expect(await verifyEnvelopeKey(signing.publicJwk, ORG, k)).toBe(false);
    // A malformed pinned key is no pin.
    expect(await verifyEnvelopeKey({ ...signing.publicJwk, x: 'AAAA' }, ORG, key)).toBe(false);
  });

  it('the statement is unambiguous: fields cannot run into each other', () => {
    const a = envelopeKeyStatement('org|a', { kid: 'b', jwk: { x: 'x', y: 'y' } });
    const b = envelopeKeyStatement('org', { kid: 'a|b', jwk: { x: 'x', y: 'y' } });
    expect(new TextDecoder().decode(a)).not.toBe(new TextDecoder().decode(b));
  });
});
