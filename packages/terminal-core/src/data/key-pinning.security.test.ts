/**
 * Key pinning and transport, played as the attacker: something on the network answers the
 * terminal's sync requests with its own envelope key (to read every card sealed after), or the
 * terminal is pointed at a plain-HTTP server. The data layer must keep the key it has, say so,
 * and never pair over plain HTTP with another machine.
 */
import {
  generateEnvelopeKeyPair,
  generateSigningKeyPair,
  signEnvelopeKey,
  verifyEnvelopeKey,
} from '@kupah/envelope';
import { IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { createFakeDeviceServer, TEST_ORG_GUID } from '../../testing/fake-device-server.ts';
import { cardCharge, pairedTerminal, VISA } from '../../testing/test-support.ts';
import { insecureServerUrl } from './pairing-service.ts';
import { PairingError } from './terminal-data.ts';
import { readKv, TerminalDatabase, writeKv } from './terminal-database.ts';

/** An envelope key the attacker holds the private half of, signed (or not) by a key of its own. */
async function attackerKey(signed: 'unsigned' | 'own-signing-key' | 'stolen-signature', sig?: string) {
  const pair = await generateEnvelopeKeyPair();
  const key = { kid: pair.kid, jwk: pair.publicJwk };
  if (signed === 'unsigned') return key;
  if (signed === 'stolen-signature') return { ...key, sig: sig! };
  const evil = await generateSigningKeyPair();
  return { ...key, sig: await signEnvelopeKey(evil.privateJwk, TEST_ORG_GUID, key) };
}

describe('envelope key pinning', () => {
  it('pairing pins the signing key of the answer; the key handed out verifies under it', async () => {
    const t = await pairedTerminal();
    const pairing = await t.data.getPairing();
    expect(await verifyEnvelopeKey(t.server.signingKey, TEST_ORG_GUID, pairing!.encryptionKey)).toBe(true);
    expect(await t.dumpDatabase()).toContain(t.server.signingKey.x);
  });

  it.each(['unsigned', 'own-signing-key', 'stolen-signature'] as const)(
    'an on-path key swap (%s) in push and pull answers is refused: the old key is kept, the error shown',
    async (how) => {
      const t = await pairedTerminal();
      const held = t.server.key;
      const first = await t.data.enqueue(cardCharge());
      // The attacker rewrites the answers: its key (same kid or a new one) instead of the server's.
      t.server.key = await attackerKey(how, held.sig);
      await t.data.syncNow();
      // The charge itself was answered and applied…
      expect((await t.data.waitForResult(first.id, 0)).state).toBe('done');
      // …but the key was not adopted, and the run says why.
      expect((await t.data.getPairing())?.encryptionKey).toEqual(held);
      expect(t.data.syncStatus().lastError).toMatch(/not signed by the server this terminal was paired with/);
      // The server did answer: the terminal is online (not backing off, no offline limits).
      expect(t.data.syncStatus().phase).toBe('idle');
      // The next card is still sealed for the real server, which opens it; the attacker's key is unused.
      const next = await t.data.enqueue(cardCharge());
      expect(next.kid).toBe(held.kid);
      t.server.key = held;
      await t.data.syncNow();
      expect(t.server.opened.get(next.id)?.card?.ccNum).toBe(VISA);
      expect(t.data.syncStatus().lastError).toBeNull();
    },
  );

  it('the same kid with another point is a swap too (a pull page would otherwise overwrite it)', async () => {
    const t = await pairedTerminal();
    const held = t.server.key;
    const evil = await generateEnvelopeKeyPair();
    t.server.key = { kid: held.kid, jwk: evil.publicJwk, sig: held.sig };
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(held);
    expect(t.data.syncStatus().lastError).toMatch(/not signed/);
  });

  it('a device paired before keys were signed pins the key a pull offers over https, then refuses swaps', async () => {
    const t = await pairedTerminal();
    // As an earlier version left it: paired, no signing key pinned.
    const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
    await db.kv.delete('signingKey');
    const rotated = await t.server.rotateKey();
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(rotated);
    expect(await readKv(db, 'signingKey')).toMatchObject({ jwk: { x: t.server.signingKey.x } });
    // Pinned now: an attacker's key is refused like on any device paired today.
    t.server.key = await attackerKey('own-signing-key', rotated.sig);
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(rotated);
    expect(t.data.syncStatus().lastError).toMatch(/not signed/);
    db.close();
  });

  it('over plain http to another machine nothing offered is pinned: a legacy device keeps its key', async () => {
    const t = await pairedTerminal();
    const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
    await db.kv.delete('signingKey');
    const pairing = (await readKv(db, 'pairing'))!;
    await writeKv(db, 'pairing', { ...pairing, serverUrl: 'http://kupah.test' });
    const held = pairing.encryptionKey;
    await t.server.rotateKey();
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(held);
    expect(await readKv(db, 'signingKey')).toBeUndefined();
    db.close();
  });

  it('a rotation signed by the pinned key is adopted', async () => {
    const t = await pairedTerminal();
    const rotated = await t.server.rotateKey();
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(rotated);
    expect(t.data.syncStatus().lastError).toBeNull();
    const item = await t.data.enqueue(cardCharge());
    expect(item.kid).toBe(rotated.kid);
  });

  it('a pairing answer whose envelope key does not verify under its signing key is refused', async () => {
    const server = await createFakeDeviceServer();
    server.key = await attackerKey('unsigned');
    const t = await pairedTerminal({ server, pair: false });
    await expect(t.data.pair(server.url, server.pairingCode, null)).rejects.toThrow(/not signed/);
    expect(await t.data.getPairing()).toBeNull();
  });
});

describe('server address', () => {
  it.each([
    ['https://donations.example.org', true],
    ['http://localhost:8080', true],
    ['http://127.0.0.1:8080', true],
    ['http://127.10.0.1', true],
    ['http://[::1]:8080', true],
    ['http://donations.example.org', false],
    ['http://192.168.1.20:8080', false],
    ['http://128.0.0.1', false],
    ['http://localhost.example.org', false],
    ['ftp://donations.example.org', false],
  ])('%s is accepted: %s', (url, ok) => {
    expect(insecureServerUrl(url, false) === null).toBe(ok);
  });

  it('plain http:// elsewhere is accepted only by a development build (VITE_ALLOW_INSECURE_SERVER=1)', () => {
    expect(insecureServerUrl('http://donations.example.org', true)).toBeNull();
    expect(insecureServerUrl('ftp://donations.example.org', true)).not.toBeNull();
  });

  it('pairing with a plain-HTTP server on the network is refused before the code is sent', async () => {
    const server = await createFakeDeviceServer();
    const t = await pairedTerminal({ server, pair: false });
    const pairing = t.data.pair('http://kupah.test', server.pairingCode, null);
    await expect(pairing).rejects.toBeInstanceOf(PairingError);
    await expect(pairing).rejects.toThrow(/https:\/\//);
    // The code was not spent: the same code pairs over https.
    expect((await t.data.pair(server.url, server.pairingCode, null)).deviceId).toBe(server.deviceId);
  });
});
