/**
 * Signed envelope keys: the server signs every envelope key it hands a device with its signing key
 * (ECDSA P-256, SHA-256), and the terminal verifies it with the signing key it pinned when it was
 * paired. An on-path attacker who swaps in its own envelope key (to read every card sealed after)
 * cannot sign it, so the terminal keeps sealing under the key it has.
 *
 * The signature covers a canonical encoding of the signing context (the organisation's GUID: a key
 * signed for one organisation is no key for another), the kid and the public point: the JSON array
 * `["kupah-envelope-key/v1", context, kid, "EC", "P-256", x, y]`, whose strings cannot run into
 * each other. The signature is IEEE P1363 (r ‖ s, 64 bytes) in base64url, as WebCrypto makes it.
 *
 * Only WebCrypto is used: the same code runs in Node 20+ (the server) and Chromium (the terminal).
 */
import { decodeBase64url, encodeBase64url } from './base64url.ts';

type Subtle = typeof globalThis.crypto.subtle;
type WebKey = Awaited<ReturnType<Subtle['importKey']>>;

const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGN = { name: 'ECDSA', hash: 'SHA-256' } as const;
const STATEMENT = 'kupah-envelope-key/v1';
const SIGNATURE_BYTES = 64;
const COORD_BYTES = 32;

/** The public half of a signing key: what a terminal pins. */
export type SigningPublicJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string };
/** The private half as the server keeps it (sealed at rest). */
export type SigningPrivateJwk = SigningPublicJwk & { d: string };

export interface SigningKeyPair {
  publicJwk: SigningPublicJwk;
  privateJwk: SigningPrivateJwk;
}

/** What is signed of an envelope key: its id and public point (and, on the wire, `sig`). */
export interface SignableEnvelopeKey {
  kid: string;
  jwk: { x: string; y: string };
  sig?: string | undefined;
}

const subtle = (): Subtle => globalThis.crypto.subtle;

/** The bytes signed for `key` in `context` (exported for tests and for documentation). */
export function envelopeKeyStatement(context: string, key: SignableEnvelopeKey): Uint8Array<ArrayBuffer> {
  return new TextEncoder().encode(
    JSON.stringify([STATEMENT, context, key.kid, 'EC', 'P-256', key.jwk.x, key.jwk.y]),
  );
}

/** A new signing key pair (both halves exportable as JWK, named fields only). */
export async function generateSigningKeyPair(): Promise<SigningKeyPair> {
  const pair = await subtle().generateKey(ECDSA, true, ['sign', 'verify']);
  const jwk = await subtle().exportKey('jwk', pair.privateKey);
  if (!jwk.x || !jwk.y || !jwk.d) throw new Error('WebCrypto exported an EC key without coordinates');
  return {
    publicJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y },
    privateJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d },
  };
}

/** Whether `jwk` looks like a P-256 public key (coordinates of the right length). */
export function isSigningPublicJwk(jwk: unknown): jwk is SigningPublicJwk {
  if (typeof jwk !== 'object' || jwk === null) return false;
  const k = jwk as Record<string, unknown>;
  const coord = (v: unknown) => typeof v === 'string' && decodeBase64url(v)?.length === COORD_BYTES;
  return k.kty === 'EC' && k.crv === 'P-256' && coord(k.x) && coord(k.y);
}

/** Imports a private signing key once (the server keeps the result per organisation). */
export function importSigningKey(privateJwk: SigningPrivateJwk): Promise<WebKey> {
  const { kty, crv, x, y, d } = privateJwk;
  return subtle().importKey('jwk', { kty, crv, x, y, d }, ECDSA, false, ['sign']);
}

/** The signature (base64url) of `key` in `context`. */
export async function signEnvelopeKey(
  signingKey: WebKey | SigningPrivateJwk,
  context: string,
  key: SignableEnvelopeKey,
): Promise<string> {
  const k = 'd' in signingKey ? await importSigningKey(signingKey as SigningPrivateJwk) : signingKey;
  const sig = await subtle().sign(SIGN, k as WebKey, envelopeKeyStatement(context, key));
  return encodeBase64url(new Uint8Array(sig));
}

/**
 * True only when `key.sig` is a valid signature of `key` in `context` by `publicJwk`. An unsigned
 * key, a malformed signature or pinned key, and any other failure all answer false: the caller
 * refuses the key, it never has to tell the cases apart.
 */
export async function verifyEnvelopeKey(
  publicJwk: SigningPublicJwk,
  context: string,
  key: SignableEnvelopeKey,
): Promise<boolean> {
  if (typeof key.sig !== 'string' || !isSigningPublicJwk(publicJwk)) return false;
  const sig = decodeBase64url(key.sig);
  if (!sig || sig.length !== SIGNATURE_BYTES) return false;
  try {
    const { kty, crv, x, y } = publicJwk;
    const verifier = await subtle().importKey('jwk', { kty, crv, x, y }, ECDSA, false, ['verify']);
    return await subtle().verify(SIGN, verifier, sig, envelopeKeyStatement(context, key));
  } catch {
    return false;
  }
}
