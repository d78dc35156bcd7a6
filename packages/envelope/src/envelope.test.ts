import {
  createCipheriv,
  createDecipheriv,
  createHash,
  createPrivateKey,
  createPublicKey,
  diffieHellman,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from 'node:crypto';
import { envelopePublicJwk, type SealedBox, sealAad, sealedBox } from '@kupah/contracts';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { decodeBase64url, encodeBase64url } from './base64url.ts';
import {
  createOpener,
  createSealer,
  EnvelopeError,
  type EnvelopeErrorCode,
  type EnvelopeKeyPair,
  generateEnvelopeKeyPair,
  open,
  seal,
} from './index.ts';

const AAD = sealAad('dev_1', '6f1c2b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b');
const DONATION = {
  card: { ccNum: '4580000000000000', cvv: '123' },
  donor: 'משה כהן',
  note: 'לרפואת שרה בת רבקה 🙏',
};

let pairs: EnvelopeKeyPair[];
const publicOf = (p: EnvelopeKeyPair) => ({ kid: p.kid, jwk: p.publicJwk });
const privateOf = (p: EnvelopeKeyPair) => ({ kid: p.kid, privateJwk: p.privateJwk });

beforeAll(async () => {
  pairs = await Promise.all([
    generateEnvelopeKeyPair(),
    generateEnvelopeKeyPair(),
    generateEnvelopeKeyPair('k_fixed'),
  ]);
});

/** The code an open fails with, or 'OPENED' with the value (which the tamper tests must never see). */
async function outcome(
  opener: ReturnType<typeof createOpener>,
  box: unknown,
  aad = AAD,
): Promise<EnvelopeErrorCode | 'OPENED'> {
  try {
    await opener.open(box, aad);
    return 'OPENED';
  } catch (err) {
    if (err instanceof EnvelopeError) return err.code;
    throw err;
  }
}

const flipByte = (text: string, i: number) => {
  const bytes = decodeBase64url(text)!;
  bytes[i]! ^= 0x01;
  return encodeBase64url(bytes);
};

/**
 * The scheme written out again with node:crypto's classic API (no WebCrypto), from the description in
 * the brief: if both agree, the module does what the contract says and not merely what it does.
 */
const independent = {
  key(kid: string, epkX: Buffer, epkY: Buffer, privateJwk: EnvelopeKeyPair['privateJwk']) {
    const shared = diffieHellman({
      privateKey: createPrivateKey({ key: privateJwk, format: 'jwk' }),
      publicKey: createPublicKey({
        key: { kty: 'EC', crv: 'P-256', x: epkX.toString('base64url'), y: epkY.toString('base64url') },
        format: 'jwk',
      }),
    });
    const salt = createHash('sha256')
      .update(Buffer.concat([epkX, epkY]))
      .digest();
    return Buffer.from(hkdfSync('sha256', shared, salt, `kupah-envelope-v1|${kid}`, 32));
  },
  open(box: SealedBox, aad: string, privateJwk: EnvelopeKeyPair['privateJwk']): unknown {
    const key = this.key(
      box.kid,
      Buffer.from(box.epk.x, 'base64url'),
      Buffer.from(box.epk.y, 'base64url'),
      privateJwk,
    );
    const ct = Buffer.from(box.ct, 'base64url');
    const d = createDecipheriv('aes-256-gcm', key, Buffer.from(box.iv, 'base64url'));
    d.setAAD(Buffer.from(aad, 'utf8'));
    d.setAuthTag(ct.subarray(ct.length - 16));
    return JSON.parse(Buffer.concat([d.update(ct.subarray(0, ct.length - 16)), d.final()]).toString('utf8'));
  },
  /** Seals raw bytes (not necessarily JSON) for `pair`. */
  sealBytes(pair: EnvelopeKeyPair, plaintext: Buffer, aad: string): SealedBox {
    const eph = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
    const jwk = eph.publicKey.export({ format: 'jwk' });
    const x = Buffer.from(jwk.x!, 'base64url');
    const y = Buffer.from(jwk.y!, 'base64url');
    const shared = diffieHellman({
      privateKey: eph.privateKey,
      publicKey: createPublicKey({ key: pair.publicJwk, format: 'jwk' }),
    });
    const salt = createHash('sha256')
      .update(Buffer.concat([x, y]))
      .digest();
    const key = Buffer.from(hkdfSync('sha256', shared, salt, `kupah-envelope-v1|${pair.kid}`, 32));
    const iv = randomBytes(12);
    const c = createCipheriv('aes-256-gcm', key, iv);
    c.setAAD(Buffer.from(aad, 'utf8'));
    const ct = Buffer.concat([c.update(plaintext), c.final(), c.getAuthTag()]);
    return {
      v: 1,
      kid: pair.kid,
      epk: { x: jwk.x!, y: jwk.y! },
      iv: iv.toString('base64url'),
      ct: ct.toString('base64url'),
    };
  },
};

describe('base64url', () => {
  it('agrees with Buffer for any bytes, both ways', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const text = encodeBase64url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(decodeBase64url(text)).toEqual(new Uint8Array(bytes));
      }),
    );
  });

  it('refuses what is not canonical unpadded base64url', () => {
    for (const bad of ['A', 'AAAAA', 'AA==', 'AB', 'AAB', 'A+B/', 'AA AA', 'ÀAAA', 'AA\nA']) {
      expect(decodeBase64url(bad), bad).toBeNull();
    }
    expect(decodeBase64url('')).toEqual(new Uint8Array(0));
    expect(decodeBase64url('AA')).toEqual(new Uint8Array([0]));
    expect(decodeBase64url('AAA')).toEqual(new Uint8Array([0, 0]));
  });
});

describe('generateEnvelopeKeyPair', () => {
  it('gives a public JWK with only kty, crv, x, y, and a random kid', async () => {
    for (const p of pairs) {
      expect(Object.keys(p.publicJwk).sort()).toEqual(['crv', 'kty', 'x', 'y']);
      expect(envelopePublicJwk.parse(p.publicJwk)).toEqual(p.publicJwk);
      expect(p.privateJwk).toMatchObject({ ...p.publicJwk, d: expect.any(String) });
    }
    expect(pairs[0]!.kid).toMatch(/^k_[A-Za-z0-9_-]{12}$/);
    expect(pairs[0]!.kid).not.toBe(pairs[1]!.kid);
    expect(pairs[2]!.kid).toBe('k_fixed');
    await expect(generateEnvelopeKeyPair('')).rejects.toThrow(RangeError);
    await expect(generateEnvelopeKeyPair('k'.repeat(65))).rejects.toThrow(RangeError);
  });
});

describe('seal and open', () => {
  it('round-trips Hebrew and emoji under each of several keys', async () => {
    const opener = createOpener(pairs.map(privateOf));
    expect(opener.kids()).toEqual(pairs.map((p) => p.kid));
    for (const p of pairs) {
      const sealer = createSealer(publicOf(p));
      expect(sealer.kid).toBe(p.kid);
      const box = await sealer.seal(DONATION, AAD);
      expect(sealedBox.parse(box)).toEqual(box);
      expect(box.kid).toBe(p.kid);
      expect(await opener.open(box, AAD)).toEqual(DONATION);
      // The same box read by the scheme written out independently.
      expect(independent.open(box, AAD, p.privateJwk)).toEqual(DONATION);
      // The wrappers.
      expect(await open([privateOf(p)], await seal(publicOf(p), DONATION, AAD), AAD)).toEqual(DONATION);
    }
  });

  it('opens what the independent implementation sealed', async () => {
    const p = pairs[1]!;
    const box = independent.sealBytes(p, Buffer.from(JSON.stringify(DONATION)), AAD);
    expect(await createOpener([privateOf(p)]).open(box, AAD)).toEqual(DONATION);
  });

  it('round-trips arbitrary JSON values', async () => {
    const p = pairs[0]!;
    const sealer = createSealer(publicOf(p));
    const opener = createOpener([privateOf(p)]);
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), fc.string({ unit: 'grapheme' }), async (value, aad) => {
        const box = await sealer.seal(value, aad);
        expect(await opener.open(box, aad)).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 200 },
    );
  });

  it('never gives the same box twice (fresh ephemeral key and IV)', async () => {
    const sealer = createSealer(publicOf(pairs[0]!));
    const boxes = await Promise.all(Array.from({ length: 20 }, () => sealer.seal(DONATION, AAD)));
    expect(new Set(boxes.map((b) => b.epk.x)).size).toBe(20);
    expect(new Set(boxes.map((b) => b.iv)).size).toBe(20);
    expect(new Set(boxes.map((b) => b.ct)).size).toBe(20);
  });

  it('refuses to seal what is not JSON or would not fit a box', async () => {
    const sealer = createSealer(publicOf(pairs[0]!));
    await expect(sealer.seal(undefined, AAD)).rejects.toThrow(TypeError);
    await expect(sealer.seal(() => 1, AAD)).rejects.toThrow(TypeError);
    await expect(sealer.seal(10n, AAD)).rejects.toThrow(TypeError);
    const big = await sealer.seal('x'.repeat(6126), AAD); // 6,128 bytes of JSON: the largest that fits
    expect(big.ct.length).toBe(8192);
    await expect(sealer.seal('x'.repeat(6127), AAD)).rejects.toThrow(RangeError);
  });

  it('refuses a key that is not an envelope key', () => {
    const jwk = pairs[0]!.publicJwk;
    expect(() => createSealer({ kid: '', jwk })).toThrow(TypeError);
    expect(() => createSealer({ kid: 'k', jwk: { ...jwk, crv: 'P-384' as 'P-256' } })).toThrow(TypeError);
    expect(() => createOpener([privateOf(pairs[0]!), privateOf(pairs[0]!)])).toThrow(TypeError);
  });
});

describe('refusals', () => {
  let box: SealedBox;
  let opener: ReturnType<typeof createOpener>;

  beforeAll(async () => {
    box = await createSealer(publicOf(pairs[0]!)).seal(DONATION, AAD);
    opener = createOpener(pairs.map(privateOf));
    expect(await outcome(opener, box)).toBe('OPENED');
  });

  it('UNKNOWN_KEY when the kid is not among the keys', async () => {
    expect(await outcome(createOpener(pairs.slice(1).map(privateOf)), box)).toBe('UNKNOWN_KEY');
    expect(await outcome(opener, { ...box, kid: 'k_retired' })).toBe('UNKNOWN_KEY');
    expect(await outcome(createOpener([]), box)).toBe('UNKNOWN_KEY');
  });

  it('TAMPERED when the aad differs (a box moved to another device or operation)', async () => {
    expect(await outcome(opener, box, sealAad('dev_2', '6f1c2b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b'))).toBe(
      'TAMPERED',
    );
    expect(await outcome(opener, box, sealAad('dev_1', '00000000-0000-4000-8000-000000000000'))).toBe(
      'TAMPERED',
    );
    expect(await outcome(opener, box, '')).toBe('TAMPERED');
  });

  it('TAMPERED when relabelled with another known kid', async () => {
    expect(await outcome(opener, { ...box, kid: pairs[1]!.kid })).toBe('TAMPERED');
  });

  it('TAMPERED for every single-byte change of ct and iv', async () => {
    const ctBytes = decodeBase64url(box.ct)!.length;
    const results = new Set<string>();
    for (let i = 0; i < ctBytes; i++) results.add(await outcome(opener, { ...box, ct: flipByte(box.ct, i) }));
    for (let i = 0; i < 12; i++) results.add(await outcome(opener, { ...box, iv: flipByte(box.iv, i) }));
    expect([...results]).toEqual(['TAMPERED']);
  });

  it('TAMPERED or MALFORMED, never a plaintext, for a changed epk', async () => {
    const other = await createSealer(publicOf(pairs[0]!)).seal(DONATION, AAD);
    expect(await outcome(opener, { ...box, epk: other.epk })).toBe('TAMPERED');
    expect(await outcome(opener, { ...box, epk: { x: box.epk.x, y: other.epk.y } })).toBe('MALFORMED');
    const results = new Set<string>();
    for (let i = 0; i < 32; i++) {
      results.add(await outcome(opener, { ...box, epk: { x: flipByte(box.epk.x, i), y: box.epk.y } }));
      results.add(await outcome(opener, { ...box, epk: { x: box.epk.x, y: flipByte(box.epk.y, i) } }));
    }
    expect(results.has('OPENED')).toBe(false);
    // y → p − y is the same x on the curve: a valid point, so it is the key that fails.
    const p = BigInt('0xffffffff00000001000000000000000000000000ffffffffffffffffffffffff');
    const y = BigInt(`0x${Buffer.from(box.epk.y, 'base64url').toString('hex')}`);
    const negY = Buffer.from((p - y).toString(16).padStart(64, '0'), 'hex').toString('base64url');
    expect(await outcome(opener, { ...box, epk: { x: box.epk.x, y: negY } })).toBe('TAMPERED');
  });

  it('TAMPERED or MALFORMED for a truncated or extended ct', async () => {
    const ct = decodeBase64url(box.ct)!;
    for (const cut of [1, 15, 16, ct.length - 16, ct.length - 1]) {
      const shorter = encodeBase64url(ct.subarray(0, ct.length - cut));
      expect(['TAMPERED', 'MALFORMED']).toContain(await outcome(opener, { ...box, ct: shorter }));
    }
    const longer = encodeBase64url(new Uint8Array([...ct, 0]));
    expect(await outcome(opener, { ...box, ct: longer })).toBe('TAMPERED');
  });

  it('MALFORMED for what is not a box', async () => {
    const ctBytes = decodeBase64url(box.ct)!;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const lastValue = alphabet.indexOf(box.ct.at(-1)!);
    const lastCharFlipped = box.ct.slice(0, -1) + alphabet[lastValue ^ 1]; // the lowest bit is never used
    const malformed: unknown[] = [
      null,
      undefined,
      'box',
      42,
      [],
      {},
      { ...box, v: 2 },
      { ...box, kid: '' },
      { ...box, kid: 7 },
      { ...box, epk: undefined },
      { ...box, epk: { x: box.epk.x } },
      { ...box, epk: { x: box.epk.x, y: box.epk.y.slice(0, -2) } },
      { ...box, epk: { x: `${box.epk.x}AA`, y: box.epk.y } },
      { ...box, epk: { x: 'A'.repeat(43), y: 'A'.repeat(43) } },
      { ...box, iv: undefined },
      { ...box, iv: `${box.iv}AAAA` },
      { ...box, iv: box.iv.slice(0, -4) },
      { ...box, iv: `${box.iv.slice(0, -1)}=` },
      { ...box, ct: undefined },
      { ...box, ct: '' },
      { ...box, ct: encodeBase64url(ctBytes.subarray(0, 15)) },
      { ...box, ct: `${box.ct}=` },
      { ...box, ct: box.ct.replace(/[A-Za-z]/, '+') },
      { ...box, ct: `${box.ct.slice(0, box.ct.length - (box.ct.length % 4))}A` }, // 4k + 1 characters
      { ...box, ct: 'A'.repeat(8196) },
    ];
    // A last character that differs only in the unused bits would decode to the same bytes.
    expect(box.ct.length % 4).not.toBe(0); // DONATION seals to 137 bytes: 183 characters
    malformed.push({ ...box, ct: lastCharFlipped });
    for (const [i, m] of malformed.entries())
      expect(await outcome(opener, m), `${i}: ${JSON.stringify(m)}`).toBe('MALFORMED');
  });

  it('MALFORMED when an authentic box holds no JSON', async () => {
    const p = pairs[0]!;
    for (const plaintext of [Buffer.from('{"ccNum":'), Buffer.from([0xff, 0xfe, 0x22]), Buffer.alloc(0)]) {
      const bad = independent.sealBytes(p, plaintext, AAD);
      expect(await outcome(opener, bad)).toBe('MALFORMED');
    }
  });

  it('a private key that cannot be imported is a plain error (a server fault), and is tried again', async () => {
    const broken = createOpener([{ kid: pairs[0]!.kid, privateJwk: { ...pairs[0]!.privateJwk, d: 'AAAA' } }]);
    for (let i = 0; i < 2; i++) {
      const err = await broken.open(box, AAD).then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect(err).not.toBeInstanceOf(EnvelopeError);
    }
  });
});
