/**
 * Donor data on the device: no phone number or e-mail address in clear, and a search that a
 * kiosk donor could abuse ("D1", "555", a partial address) never turns a whole phone number or
 * e-mail into a match; a whole value typed exactly finds its donor by keyed hash.
 */
import { contactHashInput, type PullResponse, type RefPerson } from '@kupah/contracts';
import Dexie from 'dexie';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { freshDbName } from '../../testing/test-support.ts';
import { applyPullPage, clearReferenceData, searchDonors } from './reference-repo.ts';
import { readKv, SCHEMA_V1, TerminalDatabase } from './terminal-database.ts';

const randomKey = () =>
  btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
const KEY = randomKey();
const KEY_BYTES = Uint8Array.from(atob(KEY.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
const hmacKey = await crypto.subtle.importKey('raw', KEY_BYTES, { name: 'HMAC', hash: 'SHA-256' }, false, [
  'sign',
]);
/** HMAC-SHA-256 (hex) of a contact as the server makes it. */
const hashOf = async (kind: 'phone' | 'email', value: string) => {
  const mac = await crypto.subtle.sign(
    'HMAC',
    hmacKey,
    new TextEncoder().encode(contactHashInput(kind, value)!),
  );
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
};
const hash = {
  rivkaPhone: await hashOf('phone', '305-555-0123'),
  rivkaEmail: await hashOf('email', 'rivka@example.org'),
  moshePhone: await hashOf('phone', '+972 52-123-4567'),
};

/** Donors as the server sends them: masked contacts, keyed hashes of the whole values. */
const DONORS: RefPerson[] = [
  {
    accountNum: 'D1',
    title: null,
    firstName: 'Rivka',
    lastName: 'Stern',
    firstNameHebrew: 'רבקה',
    lastNameHebrew: 'שטרן',
    phones: ['••• ••• 0123'],
    emails: ['r•••@example.org'],
    contactHashes: [hash.rivkaPhone, hash.rivkaEmail],
  },
  {
    accountNum: 'D10',
    title: null,
    firstName: 'Moshe',
    lastName: 'Levi',
    firstNameHebrew: null,
    lastNameHebrew: null,
    phones: ['••• ••• 4567'],
    emails: [],
    contactHashes: [hash.moshePhone],
  },
];

const page = (over: Partial<PullResponse> = {}) =>
  ({
    cursor: 'c1',
    more: false,
    campaigns: [],
    reasons: [],
    collectors: [],
    donors: DONORS,
    contactKey: KEY,
    ...over,
  }) as PullResponse;

const dbs: Dexie[] = [];
const open = (name = freshDbName(), indexedDB = new IDBFactory()) => {
  const db = new TerminalDatabase(name, { indexedDB, IDBKeyRange });
  dbs.push(db);
  return db;
};
afterEach(() => {
  for (const db of dbs.splice(0)) db.close();
});

const accounts = async (db: TerminalDatabase, q: string) =>
  (await searchDonors(db, q, 20)).map((d) => d.accountNum).sort();

describe('donor reference data on the device', () => {
  it('a whole phone number or e-mail address finds its donor by hash; fragments of them find nothing', async () => {
    const db = open();
    await applyPullPage(db, page());
    expect(await accounts(db, '(305) 555-0123')).toEqual(['D1']);
    expect(await accounts(db, '+1 305 555 0123')).toEqual(['D1']);
    expect(await accounts(db, ' Rivka@Example.org ')).toEqual(['D1']);
    expect(await accounts(db, '052-123-4567')).toEqual(['D10']);
    // Fragments of contact details: no prefix match on values the device does not hold.
    expect(await accounts(db, '555')).toEqual([]);
    expect(await accounts(db, '305555')).toEqual([]);
    expect(await accounts(db, 'rivka@')).toEqual([]);
    expect(await accounts(db, 'rivka@example')).toEqual([]);
    expect(await accounts(db, '3055550199')).toEqual([]);
    // The cashier still finds donors by name, account and the last digits a masked phone shows.
    expect(await accounts(db, 'stern')).toEqual(['D1']);
    expect(await accounts(db, 'D1')).toEqual(['D1', 'D10']);
    expect(await accounts(db, '0123')).toEqual(['D1']);
  });

  it('a hash made under another key matches nothing (the key comes with the pull)', async () => {
    const db = open();
    await applyPullPage(db, page({ contactKey: randomKey() }));
    expect(await accounts(db, '(305) 555-0123')).toEqual([]);
    await clearReferenceData(db);
    expect(await readKv(db, 'contactKey')).toBeUndefined();
  });

  it('upgrading a database that held contact details in clear drops them and pulls again', async () => {
    const name = freshDbName();
    const indexedDB = new IDBFactory();
    const old = new Dexie(name, { indexedDB, IDBKeyRange });
    old.version(1).stores(SCHEMA_V1);
    await old
      .table('donors')
      .put({ ...DONORS[0], phones: ['3055550123'], emails: ['rivka@example.org'], tokens: ['3055550123'] });
    await old.table('kv').put({ key: 'pullCursor', value: 'old' });
    old.close();
    const db = open(name, indexedDB);
    expect(await db.donors.count()).toBe(0);
    expect(await readKv(db, 'pullCursor')).toBeUndefined();
    expect(JSON.stringify(await db.kv.toArray())).not.toContain('3055550123');
  });
});
