/**
 * Sealed envelopes for card and bank secrets.
 *
 * The terminal keeps its queue in IndexedDB; card numbers must never rest there in clear, and the
 * terminal must not be able to read them back either (a stolen terminal gives nothing away). So each
 * secret is sealed under the server's public key with a fresh ephemeral key: ECDH P-256 →
 * HKDF-SHA-256 → AES-256-GCM (see `sealedBox` in @kupah/contracts). The additional data
 * (`sealAadV2`) binds a box to one device and to every clear field of its operation (opId, kind,
 * time, offline flag, amount, currency, donor, schedule, …), so a box can neither be moved onto
 * another item nor sent with its item's clear fields changed.
 *
 * Only WebCrypto (`globalThis.crypto.subtle`) and TextEncoder are used: the same code runs in
 * Node 20+ (the server) and Chromium (the terminal's renderer).
 */
import {
  type EnvelopeKey,
  type EnvelopePublicJwk,
  envelopeKey,
  type SealedBox,
  sealedBox,
} from '@kupah/contracts';
import { decodeBase64url, encodeBase64url } from './base64url.ts';

// The WebCrypto types are named differently by the DOM lib (the terminal) and @types/node (the
// server), so they are taken from whichever `crypto` global the including project sees.
type Subtle = typeof globalThis.crypto.subtle;
type WebKey = Awaited<ReturnType<Subtle['importKey']>>;

const ECDH = { name: 'ECDH', namedCurve: 'P-256' } as const;
const AES = { name: 'AES-GCM', length: 256 } as const;
const INFO_PREFIX = 'kupah-envelope-v1|';
const COORD_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** The longest plaintext whose box still fits `sealedBox` (ct is at most 8,192 base64url chars). */
const MAX_PLAINTEXT_BYTES = (8192 / 4) * 3 - TAG_BYTES;

export type EnvelopeErrorCode = 'UNKNOWN_KEY' | 'TAMPERED' | 'MALFORMED';

/**
 * Why a box could not be opened. The server maps UNKNOWN_KEY (a retired or foreign key) and the
 * other two (the box was altered, moved to another item, or is garbage) to different answers, so
 * callers branch on `code`, never on the message. Messages never contain any of the plaintext.
 */
export class EnvelopeError extends Error {
  override readonly name = 'EnvelopeError';
  readonly code: EnvelopeErrorCode;

  constructor(code: EnvelopeErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/**
 * A server private key as stored. A type alias (not an interface) so that it is assignable both to
 * the DOM's `JsonWebKey` and to node:crypto's `JsonWebKey`, which has an index signature.
 */
export type EnvelopePrivateJwk = { kty: 'EC'; crv: 'P-256'; x: string; y: string; d: string };

/** What an opener accepts: any JWK-like object; it is checked when first used. */
export type EnvelopePrivateJwkInput = { kty?: string; crv?: string; x?: string; y?: string; d?: string };

export interface EnvelopeKeyPair {
  kid: string;
  publicJwk: EnvelopePublicJwk;
  privateJwk: EnvelopePrivateJwk;
}

export interface Sealer {
  readonly kid: string;
  /** Seals the JSON of `value`; `aad` must be given again to open it (use `sealAadV2`). */
  seal(value: unknown, aad: string): Promise<SealedBox>;
}

export interface Opener {
  /** The key ids this opener can open, in the order given. */
  kids(): string[];
  /** Opens a box sealed under one of the keys; throws EnvelopeError when it cannot. */
  open(box: unknown, aad: string): Promise<unknown>;
}

const subtle = (): Subtle => globalThis.crypto.subtle;
const utf8 = (text: string) => new TextEncoder().encode(text);
const utf8Strict = new TextDecoder('utf-8', { fatal: true });
const infoFor = (kid: string) => utf8(INFO_PREFIX + kid);

/** Whether a key id fits `sealedBox.kid`. */
const validKid = (kid: string) => envelopeKey.shape.kid.safeParse(kid).success;

/**
 * The AES key both sides derive. `xy` is the ephemeral public key's x ‖ y: hashing it into the
 * HKDF salt ties the key to this very box's ephemeral key, and the kid in `info` ties it to the
 * server key, so a box relabelled with another kid cannot open.
 */
async function deriveAesKey(
  privateKey: WebKey,
  publicKey: WebKey,
  xy: Uint8Array<ArrayBuffer>,
  info: Uint8Array<ArrayBuffer>,
  usage: 'encrypt' | 'decrypt',
): Promise<WebKey> {
  const s = subtle();
  const [shared, salt] = await Promise.all([
    s.deriveBits({ name: 'ECDH', public: publicKey }, privateKey, 256),
    s.digest('SHA-256', xy),
  ]);
  const ikm = await s.importKey('raw', shared, 'HKDF', false, ['deriveKey']);
  return s.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt, info }, ikm, AES, false, [usage]);
}

/** A new server key pair. `kid` defaults to `k_` and 12 random base64url characters. */
export async function generateEnvelopeKeyPair(kid?: string): Promise<EnvelopeKeyPair> {
  const id = kid ?? `k_${encodeBase64url(globalThis.crypto.getRandomValues(new Uint8Array(9)))}`;
  if (!validKid(id)) throw new RangeError('An envelope kid must be 1 to 64 characters');
  const pair = await subtle().generateKey(ECDH, true, ['deriveBits']);
  const jwk = await subtle().exportKey('jwk', pair.privateKey);
  if (!jwk.x || !jwk.y || !jwk.d) throw new Error('WebCrypto exported an EC key without coordinates');
  // Named fields only: the public half goes to devices and must be exactly `envelopePublicJwk`, and
  // neither half keeps WebCrypto's `ext`/`key_ops`, which would constrain a later import.
  return {
    kid: id,
    publicJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y },
    privateJwk: { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d },
  };
}

/**
 * A sealer for one server key. The key is imported on the first seal and kept, so the terminal
 * pays for it once rather than per donation. Throws a TypeError at once if `key` is not a valid
 * envelope key (a bug, not a condition to recover from).
 */
export function createSealer(key: EnvelopeKey): Sealer {
  const parsed = envelopeKey.safeParse(key);
  if (!parsed.success) throw new TypeError(`Not an envelope key: ${parsed.error.issues[0]?.message ?? ''}`);
  const { kid, jwk } = parsed.data;
  const info = infoFor(kid);
  let serverKey: Promise<WebKey> | undefined;

  const publicKey = (): Promise<WebKey> => {
    serverKey ??= subtle()
      .importKey('jwk', { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, ECDH, false, [])
      .catch((err: unknown) => {
        serverKey = undefined; // let the next seal try again rather than fail forever
        throw err;
      });
    return serverKey;
  };

  return {
    kid,
    async seal(value, aad) {
      const json = JSON.stringify(value);
      if (json === undefined) throw new TypeError('Only JSON values can be sealed');
      const plaintext = utf8(json);
      if (plaintext.length > MAX_PLAINTEXT_BYTES) {
        throw new RangeError(`At most ${MAX_PLAINTEXT_BYTES} bytes of JSON can be sealed`);
      }
      const s = subtle();
      // The ephemeral private key is not extractable; its public half always is.
      const [server, ephemeral] = await Promise.all([
        publicKey(),
        s.generateKey(ECDH, false, ['deriveBits']),
      ]);
      const point = new Uint8Array(await s.exportKey('raw', ephemeral.publicKey)); // 0x04 ‖ x ‖ y
      const xy = point.subarray(1);
      const aesKey = await deriveAesKey(ephemeral.privateKey, server, xy, info, 'encrypt');
      const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
      const ct = await s.encrypt({ name: 'AES-GCM', iv, additionalData: utf8(aad) }, aesKey, plaintext);
      return {
        v: 1,
        kid,
        epk: {
          x: encodeBase64url(xy.subarray(0, COORD_BYTES)),
          y: encodeBase64url(xy.subarray(COORD_BYTES)),
        },
        iv: encodeBase64url(iv),
        ct: encodeBase64url(new Uint8Array(ct)),
      };
    },
  };
}

interface HeldKey {
  jwk: EnvelopePrivateJwkInput;
  info: Uint8Array<ArrayBuffer>;
  key?: Promise<WebKey>;
}

function bytesOf(text: string, length: number | 'tagged', what: string): Uint8Array<ArrayBuffer> {
  const bytes = decodeBase64url(text);
  const ok = bytes && (length === 'tagged' ? bytes.length >= TAG_BYTES : bytes.length === length);
  if (!ok) throw new EnvelopeError('MALFORMED', `The box's ${what} is not valid`);
  return bytes;
}

/**
 * An opener for the server's live keys. Each private key is imported the first time a box under
 * it arrives, and kept. A key that cannot be imported is a server fault, not the box's: it throws
 * a plain Error (not EnvelopeError) so the item is retried rather than failed.
 */
export function createOpener(keys: readonly { kid: string; privateJwk: EnvelopePrivateJwkInput }[]): Opener {
  const held = new Map<string, HeldKey>();
  for (const { kid, privateJwk } of keys) {
    if (held.has(kid)) throw new TypeError(`Envelope key ${kid} is given twice`);
    held.set(kid, { jwk: privateJwk, info: infoFor(kid) });
  }

  const privateKey = (kid: string, h: HeldKey): Promise<WebKey> => {
    h.key ??= subtle()
      .importKey('jwk', { kty: h.jwk.kty, crv: h.jwk.crv, x: h.jwk.x, y: h.jwk.y, d: h.jwk.d }, ECDH, false, [
        'deriveBits',
      ])
      .catch((err: unknown) => {
        h.key = undefined;
        throw new Error(`Envelope key ${kid} could not be imported`, { cause: err });
      });
    return h.key;
  };

  return {
    kids: () => [...held.keys()],
    async open(input, aad) {
      const parsed = sealedBox.safeParse(input);
      if (!parsed.success) throw new EnvelopeError('MALFORMED', 'Not a sealed box');
      const box = parsed.data;
      const h = held.get(box.kid);
      if (!h) throw new EnvelopeError('UNKNOWN_KEY', `No envelope key ${box.kid}`);

      const point = new Uint8Array(1 + 2 * COORD_BYTES);
      point[0] = 0x04;
      point.set(bytesOf(box.epk.x, COORD_BYTES, 'epk.x'), 1);
      point.set(bytesOf(box.epk.y, COORD_BYTES, 'epk.y'), 1 + COORD_BYTES);
      const iv = bytesOf(box.iv, IV_BYTES, 'iv');
      const ct = bytesOf(box.ct, 'tagged', 'ct');

      const s = subtle();
      let epk: WebKey;
      try {
        // Importing checks that the point is on the curve (no invalid-curve tricks).
        epk = await s.importKey('raw', point, ECDH, false, []);
      } catch (err) {
        throw new EnvelopeError('MALFORMED', "The box's epk is not a P-256 point", { cause: err });
      }
      const aesKey = await deriveAesKey(
        await privateKey(box.kid, h),
        epk,
        point.subarray(1),
        h.info,
        'decrypt',
      );

      let plaintext: ArrayBuffer;
      try {
        plaintext = await s.decrypt({ name: 'AES-GCM', iv, additionalData: utf8(aad) }, aesKey, ct);
      } catch (err) {
        throw new EnvelopeError('TAMPERED', 'The box was altered or belongs to another item', { cause: err });
      }
      try {
        return JSON.parse(utf8Strict.decode(plaintext));
      } catch {
        throw new EnvelopeError('MALFORMED', 'The box does not hold JSON');
      }
    },
  };
}

/** Seals one value. Imports the key on every call: keep a `createSealer` for repeated use. */
export function seal(key: EnvelopeKey, value: unknown, aad: string): Promise<SealedBox> {
  return createSealer(key).seal(value, aad);
}

/** Opens one box. Imports the key on every call: keep a `createOpener` for repeated use. */
export function open(
  keys: readonly { kid: string; privateJwk: EnvelopePrivateJwkInput }[],
  box: unknown,
  aad: string,
): Promise<unknown> {
  return createOpener(keys).open(box, aad);
}
