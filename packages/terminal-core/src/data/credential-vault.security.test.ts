/**
 * The device credential at rest in the web build (no OS key store): what someone who reads the
 * terminal's IndexedDB through the API or dumps its records gets. The limit, a copy of the
 * profile's files, is described in credential-vault.ts and docs/security.md.
 */
import { IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { TEST_CREDENTIAL } from '../../testing/fake-device-server.ts';
import { cardCharge, pairedTerminal, testBridge } from '../../testing/test-support.ts';
import { protectCredential, revealCredential } from './credential-vault.ts';
import { type StoredCredential, TerminalDatabase } from './terminal-database.ts';

const latin1 = (b: Uint8Array) => String.fromCharCode(...b);
const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
const base64 = (b: Uint8Array) => btoa(latin1(b));
const sameBytes = (a: ArrayBuffer | Uint8Array, b: ArrayBuffer | Uint8Array) =>
  hex(new Uint8Array(a)) === hex(new Uint8Array(b));

/** Every record of every object store, read with the raw IndexedDB API (no Dexie), as text. */
async function rawDump(indexedDB: IDBFactory, name: string): Promise<string> {
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    const open = indexedDB.open(name);
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  try {
    const stores = [...db.objectStoreNames];
    const tx = db.transaction(stores, 'readonly');
    const all = await Promise.all(
      stores.map(
        (store) =>
          new Promise<[string, unknown[]]>((resolve, reject) => {
            const req = tx.objectStore(store).getAll();
            req.onsuccess = () => resolve([store, req.result]);
            req.onerror = () => reject(req.error);
          }),
      ),
    );
    return JSON.stringify(Object.fromEntries(all), (_key, v: unknown) => {
      if (v instanceof CryptoKey)
        return { type: v.type, extractable: v.extractable, algorithm: v.algorithm, usages: v.usages };
      const bytes =
        v instanceof ArrayBuffer
          ? new Uint8Array(v)
          : ArrayBuffer.isView(v)
            ? new Uint8Array(v.buffer, v.byteOffset, v.byteLength)
            : null;
      return bytes ? { latin1: latin1(bytes), hex: hex(bytes), base64: base64(bytes) } : v;
    });
  } finally {
    db.close();
  }
}

/** The credential as someone searching a dump would look for it. */
const spellings = (credential: string) => {
  const utf8 = new TextEncoder().encode(credential);
  return [
    credential,
    credential.replace(/-/g, ''),
    credential.toUpperCase(),
    hex(utf8),
    base64(utf8),
    [...credential].map((c) => `${c}\u0000`).join(''),
  ];
};

async function storedCredential(t: { indexedDB: IDBFactory; dbName: string }) {
  const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
  try {
    const row = await db.kv.get('credential');
    return row?.value as StoredCredential;
  } finally {
    db.close();
  }
}

describe('the device credential at rest in the web build', () => {
  it('a raw dump of every IndexedDB record shows it in no spelling, after pairing and a sync', async () => {
    const t = await pairedTerminal();
    await t.data.enqueue(cardCharge());
    await t.data.syncNow();
    expect(t.server.pushes).toHaveLength(1);
    const dump = await rawDump(t.indexedDB, t.dbName);
    expect(dump).toContain('"scheme":"webcrypto"');
    for (const s of spellings(TEST_CREDENTIAL)) expect(dump).not.toContain(s);
  });

  it('the key that opens it cannot be read out, not even by a script of the page', async () => {
    const t = await pairedTerminal();
    const stored = await storedCredential(t);
    if (stored.scheme !== 'webcrypto') throw new Error('expected the WebCrypto scheme');
    expect(stored.key.extractable).toBe(false);
    await expect(crypto.subtle.exportKey('raw', stored.key)).rejects.toThrow();
    await expect(crypto.subtle.exportKey('jwk', stored.key)).rejects.toThrow();
    const wrapper = await crypto.subtle.generateKey({ name: 'AES-KW', length: 256 }, true, ['wrapKey']);
    await expect(crypto.subtle.wrapKey('raw', stored.key, wrapper, 'AES-KW')).rejects.toThrow();
    expect(stored.key.usages.sort()).toEqual(['decrypt', 'encrypt']);
  });

  it('is bound to its device: the record moved under another device id, or altered, does not open', async () => {
    const bridge = testBridge();
    const stored = await protectCredential(TEST_CREDENTIAL, 'dev_a', bridge);
    expect(await revealCredential(stored, 'dev_a', bridge)).toBe(TEST_CREDENTIAL);
    await expect(revealCredential(stored, 'dev_b', bridge)).rejects.toThrow();
    if (stored.scheme !== 'webcrypto') throw new Error('expected the WebCrypto scheme');
    const flipped = new Uint8Array(stored.ciphertext.slice(0));
    flipped[0]! ^= 1;
    await expect(
      revealCredential({ ...stored, ciphertext: flipped.buffer }, 'dev_a', bridge),
    ).rejects.toThrow();
  });

  it('each pairing gets a key and a nonce of its own', async () => {
    const bridge = testBridge();
    const [a, b] = await Promise.all([
      protectCredential(TEST_CREDENTIAL, 'dev_a', bridge),
      protectCredential(TEST_CREDENTIAL, 'dev_a', bridge),
    ]);
    if (a.scheme !== 'webcrypto' || b.scheme !== 'webcrypto')
      throw new Error('expected the WebCrypto scheme');
    expect(a.key).not.toBe(b.key);
    expect(sameBytes(a.iv, b.iv)).toBe(false);
    expect(sameBytes(a.ciphertext, b.ciphertext)).toBe(false);
    await expect(revealCredential({ ...a, key: b.key }, 'dev_a', bridge)).rejects.toThrow();
  });
});
