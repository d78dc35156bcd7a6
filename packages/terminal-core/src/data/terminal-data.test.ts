import { sealAad } from '@kupah/contracts';
import { createOpener, generateEnvelopeKeyPair } from '@kupah/envelope';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeDeviceServer, TEST_CREDENTIAL } from '../../testing/fake-device-server.ts';
import {
  cardCharge,
  DECLINED_VISA,
  freshDbName,
  GOOD_ROUTING,
  pairedTerminal,
  type TestTerminal,
  testBridge,
  VISA,
} from '../../testing/test-support.ts';
import { createTerminalData } from './create-terminal-data.ts';
import { contactHash, contactQuery } from './donor-search.ts';
import { verifyPinRecord } from './manager-pin.ts';
import { OutboxRefusal, PairingError } from './terminal-data.ts';
import { readKv, TerminalDatabase } from './terminal-database.ts';

const open: TestTerminal[] = [];
async function terminal(...args: Parameters<typeof pairedTerminal>) {
  const t = await pairedTerminal(...args);
  open.push(t);
  return t;
}
afterEach(() => {
  for (const t of open.splice(0)) t.data.close();
});

async function refusal(p: Promise<unknown>): Promise<OutboxRefusal> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(OutboxRefusal);
  return err as OutboxRefusal;
}

const achCharge = (accountNum: string, routingNum = GOOD_ROUTING) => ({
  kind: 'charge' as const,
  request: {
    amount: 36,
    currency: 'USD' as const,
    paymentMethodId: 'ACH' as const,
    bankAccount: { accountNum, routingNum, accountType: 'Checking', nameOnAccount: 'Sara Levi' },
    donor: { firstName: 'Sara', lastName: 'Levi' },
  },
});

describe('enqueue: validation', () => {
  it('refuses before pairing', async () => {
    const t = await terminal({ pair: false });
    expect((await refusal(t.data.enqueue(cardCharge()))).code).toBe('NOT_PAIRED');
  });

  it('refuses a bad card with every failing field, and writes nothing', async () => {
    const t = await terminal();
    const r = await refusal(
      t.data.enqueue(cardCharge({ card: { ccNum: '4242424242424241', expiry: '13/30', cvv: '1' } })),
    );
    expect(r.code).toBe('INVALID');
    expect(r.fields.map((f) => f.field).sort()).toEqual(['card.ccNum', 'card.cvv', 'card.expiry']);
    expect(r.message).not.toContain('4242424242424241');
    expect(await t.data.listOutbox()).toEqual([]);
  });

  it('refuses a bad routing number', async () => {
    const t = await terminal();
    const r = await refusal(t.data.enqueue(achCharge('123456789', '123456789')));
    expect(r.fields).toEqual([
      { field: 'bankAccount.routingNum', message: 'is not a valid ABA routing number' },
    ]);
  });

  it('refuses reasons that do not add up to the amount', async () => {
    const t = await terminal();
    const r = await refusal(
      t.data.enqueue(
        cardCharge({
          reasons: [
            { reasonNum: 1, reasonAmount: 10 },
            { reasonNum: 2, reasonAmount: 9 },
          ],
        }),
      ),
    );
    expect(r.fields).toEqual([
      { field: 'reasons', message: 'reason amounts add up to 19.00 but the amount is 18.00' },
    ]);
  });
});

describe('enqueue: offline limits (500.00 per payment, 1,000.00 per device)', () => {
  it('online, the limits do not apply', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge({ amount: 900 }));
    expect(item).toMatchObject({ state: 'queued', amountMinor: 90_000 });
  });

  it('offline (navigator.onLine false): a payment over the per-payment limit is refused', async () => {
    const t = await terminal();
    t.setOnline(false);
    const r = await refusal(t.data.enqueue(cardCharge({ amount: 500.01 })));
    expect(r.code).toBe('OVER_PAYMENT_LIMIT');
    expect(r.message).toContain('500.00');
    expect(r.message).toContain('500.01');
    await expect(t.data.enqueue(cardCharge({ amount: 500 }))).resolves.toMatchObject({ amountMinor: 50_000 });
  });

  it('offline: the unsent total may not pass the device limit; the message gives the figures', async () => {
    const t = await terminal();
    t.setOnline(false);
    await t.data.enqueue(cardCharge({ amount: 400 }));
    await t.data.enqueue(cardCharge({ amount: 400 }));
    const r = await refusal(t.data.enqueue(cardCharge({ amount: 300 })));
    expect(r.code).toBe('OVER_DEVICE_LIMIT');
    expect(r.message).toMatch(/at most 1,000\.00.*holds 800\.00.*300\.00 would make 1,100\.00/);
    await expect(t.data.enqueue(cardCharge({ amount: 200 }))).resolves.toMatchObject({ amountMinor: 20_000 });
  });

  it('the unsent total behind the device limit follows every state change', async () => {
    const t = await terminal();
    t.server.decide = (op) => {
      const last = (op.request.donor as { lastName?: string } | undefined)?.lastName;
      if (last === 'Busy') return { status: 'Error', retryable: true };
      if (last === 'Bad')
        return { status: 'Error', retryable: false, error: { errorCode: 'X', message: 'x' } };
      return { status: 'Success', retryable: false };
    };
    const stored = async () => {
      const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
      try {
        return await readKv(db, 'unsentTotalMinor');
      } finally {
        db.close();
      }
    };
    const exact = async () =>
      (await t.data.listOutbox({ states: ['queued', 'sending'] })).reduce((s, i) => s + i.amountMinor, 0);
    for (const [amount, lastName] of [
      [10, 'Ok'],
      [20, 'Busy'],
      [40, 'Bad'],
      [80, 'Ok'],
    ] as const) {
      await t.data.enqueue(cardCharge({ amount, donor: { lastName } }));
    }
    const toDiscard = await t.data.enqueue(cardCharge({ amount: 160 }));
    expect(await stored()).toBe(31_000);
    await t.data.discard(toDiscard.id, 'changed mind');
    expect(await stored()).toBe(15_000);
    t.server.faults.push.push('network');
    await t.data.syncNow();
    expect(await stored()).toBe(15_000);
    await t.data.syncNow();
    expect(await stored()).toBe(2_000);
    expect(await exact()).toBe(2_000);
    t.setOnline(false);
    await t.data.enqueue(cardCharge({ amount: 480 }));
    await t.data.enqueue(cardCharge({ amount: 480 }));
    expect((await refusal(t.data.enqueue(cardCharge({ amount: 50 })))).message).toContain('holds 980.00');
  });

  it('the network just dropped (the last sync was good): over the limit is refused, nothing written; under it is queued', async () => {
    const t = await terminal();
    await t.data.syncNow();
    expect(t.data.syncStatus()).toMatchObject({ online: true });
    // The server stops answering; the terminal has not noticed yet.
    t.server.faults.pull.push('network', 'network', 'network');
    t.server.faults.push.push('network', 'network', 'network');
    const r = await refusal(t.data.enqueue(cardCharge({ amount: 600 })));
    expect(r.code).toBe('OVER_PAYMENT_LIMIT');
    expect(await t.data.listOutbox({})).toEqual([]);
    expect(t.data.syncStatus()).toMatchObject({ online: false });
    // Under the limits a donation is taken offline as always.
    await expect(t.data.enqueue(cardCharge({ amount: 50 }))).resolves.toMatchObject({ state: 'queued' });
    expect((await t.data.listOutbox({})).map((i) => i.amountMinor)).toEqual([5_000]);
  });

  it('over the device total while the server answers: sent at once, never held offline', async () => {
    const t = await terminal();
    t.setOnline(false);
    await t.data.enqueue(cardCharge({ amount: 450 }));
    await t.data.enqueue(cardCharge({ amount: 450 }));
    t.setOnline(true);
    // 900.00 held: another 300.00 passes the device total, so it needs the server now — which
    // answers, so the sync that authorises it also forwards what was held.
    const item = await t.data.enqueue(cardCharge({ amount: 300 }));
    expect(item).toMatchObject({ amountMinor: 30_000 });
    expect((await t.data.listOutbox({ states: ['done'] })).length).toBe(2);
  });

  it('offline also when the last sync could not reach the server, until a sync gets through', async () => {
    const t = await terminal();
    t.server.faults.pull.push('network');
    await t.data.syncNow();
    expect(t.data.syncStatus()).toMatchObject({ online: false, phase: 'waiting' });
    expect((await refusal(t.data.enqueue(cardCharge({ amount: 600 })))).code).toBe('OVER_PAYMENT_LIMIT');
    await t.data.syncNow();
    expect(t.data.syncStatus()).toMatchObject({ online: true, phase: 'idle', lastError: null });
    await expect(t.data.enqueue(cardCharge({ amount: 600 }))).resolves.toMatchObject({ amountMinor: 60_000 });
  });
});

describe('the "declined after sending" alarm', () => {
  it('counts the declines nobody saw: one shown on the result screen is not an alarm; one answered later is', async () => {
    const t = await terminal();
    const seenNow = await t.data.enqueue(
      cardCharge({ amount: 20, card: { ccNum: DECLINED_VISA, expiry: '12/30', cvv: '123' } }),
    );
    await t.data.syncNow();
    expect((await t.data.waitForResult(seenNow.id, 0)).state).toBe('declined');
    expect((await t.data.summary()).declined).toBe(1);
    await t.data.markOutcomeSeen(seenNow.id);
    expect((await t.data.summary()).declined).toBe(0);
    // Taken offline, declined when it reached the server after the donor left: the alarm.
    t.setOnline(false);
    const later = await t.data.enqueue(
      cardCharge({ amount: 30, card: { ccNum: DECLINED_VISA, expiry: '12/30', cvv: '123' } }),
    );
    t.setOnline(true);
    await t.data.syncNow();
    expect((await t.data.waitForResult(later.id, 0)).state).toBe('declined');
    expect((await t.data.summary()).declined).toBe(1);
    // Marking an item that is not final does nothing.
    const queued = await t.data.enqueue(cardCharge({ amount: 5 }));
    await t.data.markOutcomeSeen(queued.id);
    expect((await t.data.listOutbox({ states: ['queued'] })).length).toBe(1);
  });
});

describe('enqueue: what is written', () => {
  it('an item with a local reference, brand and last 4, device info, and nothing else of the card', async () => {
    const t = await terminal();
    const a = await t.data.enqueue(cardCharge());
    const b = await t.data.enqueue(cardCharge({ amount: 36, currency: 'ILS' }));
    expect(a).toMatchObject({
      localRef: 'HK-0001',
      kind: 'charge',
      state: 'queued',
      createdAt: '2026-03-01T10:00:00.000Z',
      expiresAt: '2026-03-04T10:00:00.000Z',
      amountMinor: 1800,
      currency: 'USD',
      method: 'Credit_Card',
      display: { donorName: 'Moshe Cohen', brand: 'Visa', last4: '4242', frequency: null },
      attempts: 0,
    });
    expect(b.localRef).toBe('HK-0002');
    expect(a.request).toMatchObject({
      orgGUID: t.server.settings.orgGuid,
      uniqueTransactionId: a.id,
      card: { expiry: '12/39' },
      deviceInfo: {
        deviceName: 'Hall kiosk',
        timezone: 'America/New_York',
        deviceCreatedDate: a.createdAt,
        location: { locationName: 'Main hall', latitude: 40.71, longitude: -74 },
      },
    });
    expect(a.request.card).toEqual({ expiry: '12/39' });
    expect(await t.data.summary()).toEqual({
      pending: 2,
      pendingTotals: { USD: 1800, ILS: 3600 },
      confirming: 0,
      confirmingTotals: {},
      declined: 0,
      expiringSoon: 0,
      expired: 0,
    });
  });

  it('no table holds a card number, CVV, bank account or routing number in clear', async () => {
    const t = await terminal();
    await t.data.enqueue(cardCharge({ card: { ccNum: '4242 4242 4242 4242', expiry: '12/39', cvv: '987' } }));
    await t.data.enqueue(achCharge('9876543210123'));
    await t.data.enqueue({
      kind: 'charge',
      request: {
        amount: 5,
        currency: 'USD',
        paymentMethodId: 'Provider_3',
        card: { ccNum: 'tok_charity_9f8e7d6c' },
      },
    });
    const dump = await t.dumpDatabase();
    for (const secret of [
      VISA,
      '4242 4242 4242 4242',
      '"987"',
      '9876543210123',
      GOOD_ROUTING,
      'tok_charity_9f8e7d6c',
    ]) {
      expect(dump).not.toContain(secret);
    }
    expect(dump).not.toMatch(/"(ccNum|cvv|routingNum)"/);
    expect(dump).toContain('"last4":"0123"');
  });

  it('the sealed box opens with the server key to exactly the secrets, only for its device and opId', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(achCharge('9876543210123'));
    await t.data.syncNow();
    const sent = t.server.received.find((op) => op.opId === item.id)!;
    expect(sent.sealed?.kid).toBe(t.server.key.kid);
    expect(t.server.opened.get(item.id)).toEqual({
      bankAccount: { accountNum: '9876543210123', routingNum: GOOD_ROUTING },
    });
    expect(sent.request).toMatchObject({
      bankAccount: { accountType: 'Checking', nameOnAccount: 'Sara Levi' },
    });
    expect(JSON.stringify(sent.request)).not.toContain('9876543210123');
    // Another key, or another operation's aad: the box does not open.
    const stranger = await generateEnvelopeKeyPair();
    await expect(
      createOpener([{ kid: sent.sealed!.kid, privateJwk: stranger.privateJwk }]).open(
        sent.sealed!,
        sealAad(t.server.deviceId, item.id),
      ),
    ).rejects.toThrow();
    const other = await t.data.enqueue(cardCharge());
    await t.data.syncNow();
    expect(t.server.opened.get(other.id)).toEqual({ card: { ccNum: VISA, cvv: '123' } });
  });

  it('in collector mode the collector is attributed; without one the entry is refused', async () => {
    const t = await terminal();
    await t.data.saveLocalSettings({ mode: 'collector' });
    expect((await refusal(t.data.enqueue(cardCharge()))).fields).toEqual([
      { field: 'collectorId', message: 'is required in collector mode' },
    ]);
    await t.data.saveLocalSettings({ collectorAccountNum: 'C-7' });
    const item = await t.data.enqueue(cardCharge());
    expect(item.request.collectorId).toBe('C-7');
    expect(item.display.collectorAccountNum).toBe('C-7');
  });

  it('voids and donor saves are queued without limits or secrets', async () => {
    const t = await terminal();
    const v = await t.data.enqueueVoid('R1001', 'typed twice');
    const d = await t.data.enqueueDonor({ donorID: '', firstName: 'Rivka', lastName: 'Katz' });
    expect(v).toMatchObject({
      kind: 'void',
      kid: null,
      receiptNum: 'R1001',
      request: { receiptNum: 'R1001' },
    });
    expect(d).toMatchObject({ kind: 'saveDonor', display: { donorName: 'Rivka Katz' } });
    expect((await refusal(t.data.enqueueVoid('', null))).fields[0]?.field).toBe('receiptNum');
    await t.data.syncNow();
    expect((await t.data.listOutbox()).map((i) => i.state)).toEqual(['done', 'done']);
  });
});

describe('pairing and the credential at rest', () => {
  it('the credential is stored encrypted under a non-extractable WebCrypto key, never in clear', async () => {
    const t = await terminal();
    const dump = await t.dumpDatabase();
    expect(dump).not.toContain(TEST_CREDENTIAL);
    expect(dump).not.toContain(TEST_CREDENTIAL.replace(/-/g, ''));
    const db = new TerminalDatabase(t.dbName, { indexedDB: t.indexedDB, IDBKeyRange });
    try {
      const stored = await readKv(db, 'credential');
      expect(stored).toMatchObject({ scheme: 'webcrypto' });
      if (stored?.scheme === 'webcrypto') {
        expect(stored.key.extractable).toBe(false);
        await expect(crypto.subtle.exportKey('raw', stored.key)).rejects.toThrow();
      }
    } finally {
      db.close();
    }
    // And it still works: a push is authorised.
    await t.data.enqueue(cardCharge());
    await t.data.syncNow();
    expect(t.server.pushes).toHaveLength(1);
  });

  it('with the OS secret store (Electron), the credential is kept as the bridge protected it', async () => {
    const bridge = testBridge({
      secrets: {
        protect: async (plain) => `os:${[...plain].reverse().join('')}`,
        reveal: async (text) => [...text.slice(3)].reverse().join(''),
      },
    });
    const t = await terminal({ bridge });
    expect(await t.dumpDatabase()).not.toContain(TEST_CREDENTIAL);
    expect(await t.dumpDatabase()).toContain('"scheme":"os"');
    await t.data.enqueue(cardCharge());
    await t.data.syncNow();
    expect(t.server.pushes).toHaveLength(1);
  });

  it('a wrong code and an unreachable server are told apart', async () => {
    const t = await terminal({ pair: false });
    const wrong = await t.data.pair(t.server.url, 'ZZZZ-ZZZZ', null).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(PairingError);
    expect((wrong as PairingError).code).toBe('PAIRING_CODE_INVALID');
    t.server.faults.pair.push('network');
    const down = await t.data.pair(t.server.url, t.server.pairingCode, null).catch((e: unknown) => e);
    expect((down as PairingError).code).toBe('UNREACHABLE');
    expect(await t.data.getPairing()).toBeNull();
    expect(t.data.syncStatus().phase).toBe('unpaired');
  });

  it('pairing stores settings, key and the first reference data; a typed name becomes the device name', async () => {
    const server = await createFakeDeviceServer();
    server.reference.campaigns = [{ campaignNum: 7, name: 'Gala', friendlyName: 'Gala 5787' }];
    server.reference.reasons = [{ reasonNum: 3, name: 'Building', nameHebrew: 'בנין', campaignNum: 7 }];
    const t = await terminal({ server, pair: false });
    const pairing = await t.data.pair(
      `${server.url}/`,
      ` ${server.pairingCode.toLowerCase()} `,
      'Lobby Kiosk',
    );
    expect(pairing).toMatchObject({
      serverUrl: server.url,
      deviceId: server.deviceId,
      encryptionKey: server.key,
    });
    expect(await t.data.campaigns()).toEqual(server.reference.campaigns);
    expect(await t.data.reasons()).toEqual(server.reference.reasons);
    expect((await t.data.getLocalSettings()).deviceName).toBe('Lobby Kiosk');
    expect((await t.data.enqueue(cardCharge())).localRef).toBe('LK-0001');
  });

  it('unpairing is refused while items wait, allowed once they are forwarded', async () => {
    const t = await terminal();
    await t.data.enqueue(cardCharge());
    const err = await t.data.unpair().catch((e: unknown) => e);
    expect((err as PairingError).code).toBe('QUEUE_NOT_EMPTY');
    await t.data.syncNow();
    await t.data.unpair();
    expect(await t.data.getPairing()).toBeNull();
    expect(t.data.syncStatus().phase).toBe('unpaired');
    expect(await t.dumpDatabase()).not.toContain('"credential"');
  });
});

describe('local settings', () => {
  it('defaults, partial saves, refusal of bad values, and the manager PIN as SHA-256', async () => {
    const data = createTerminalData({
      bridge: testBridge(),
      dbName: freshDbName(),
      indexedDB: new IDBFactory(),
      IDBKeyRange,
    });
    try {
      expect(await data.getLocalSettings()).toEqual({
        deviceName: null,
        location: { locationName: null, latitude: null, longitude: null },
        language: 'en',
        mode: 'cashier',
        collectorAccountNum: null,
        managerPinHash: null,
        kioskIdleSeconds: 60,
      });
      expect(await data.saveLocalSettings({ language: 'he', kioskIdleSeconds: 90 })).toMatchObject({
        language: 'he',
        kioskIdleSeconds: 90,
        mode: 'cashier',
      });
      await expect(data.saveLocalSettings({ kioskIdleSeconds: -1 })).rejects.toThrow(/kioskIdleSeconds/);
      expect(await data.checkManagerPin('1234')).toBe(false);
      await data.setManagerPin('2580');
      const stored = (await data.getLocalSettings()).managerPinHash!;
      expect(stored).toMatch(/^pbkdf2-sha256\$/);
      expect((await verifyPinRecord('2580', stored)).ok).toBe(true);
      expect(await data.checkManagerPin('1234')).toBe(false);
      expect(await data.checkManagerPin('2580')).toBe(true);
    } finally {
      data.close();
    }
  });
});

describe('donor search (offline cache)', () => {
  it('finds donors by Hebrew name, English name, account number, last digits, and a whole phone or e-mail by its hash only', async () => {
    const server = await createFakeDeviceServer();
    server.contactKey = 'k'.repeat(43);
    const hashes = async (...contacts: string[]) =>
      Promise.all(contacts.map((c) => contactHash(server.contactKey!, contactQuery(c)!)));
    const person = (accountNum: string, over: object) => ({
      accountNum,
      title: null,
      firstName: null,
      lastName: null,
      firstNameHebrew: null,
      lastNameHebrew: null,
      phones: [],
      emails: [],
      ...over,
    });
    // What a real server sends: masked contacts and their keyed hashes, never the values.
    server.reference.donors = [
      person('D-1', {
        firstName: 'Avraham',
        lastName: 'Cohen',
        firstNameHebrew: 'אברהם',
        lastNameHebrew: 'כהן',
        phones: ['••• ••• 4567'],
        contactHashes: await hashes('+972-52-123-4567'),
      }),
      person('D-2', {
        firstName: 'Sara',
        lastName: 'Levi',
        lastNameHebrew: 'לוי',
        emails: ['s•••@example.org'],
        contactHashes: await hashes('sara@example.org'),
      }),
      person('D-3', {
        firstName: 'Yitzchak',
        lastName: 'Cohen',
        phones: ['••• ••• 0142'],
        contactHashes: await hashes('(212) 555-0142'),
      }),
    ];
    server.pages = 2;
    const t = await terminal({ server });
    await t.data.syncNow();
    const accounts = async (q: string) => (await t.data.searchDonors(q)).map((d) => d.accountNum).sort();
    expect(await accounts('כהן')).toEqual(['D-1']);
    expect(await accounts('אבר')).toEqual(['D-1']);
    expect(await accounts('cohen')).toEqual(['D-1', 'D-3']);
    expect(await accounts('coh yit')).toEqual(['D-3']);
    expect(await accounts('4567')).toEqual(['D-1']);
    expect(await accounts('052-123-4567')).toEqual(['D-1']);
    expect(await accounts('+1 212 555 0142')).toEqual(['D-3']);
    expect(await accounts('SARA@example.org')).toEqual(['D-2']);
    // A fragment of a phone number or e-mail address finds nothing: no contact is held in clear.
    expect(await accounts('052-1234')).toEqual([]);
    expect(await accounts('sara@')).toEqual([]);
    expect(await accounts('d-2')).toEqual(['D-2']);
    expect(await t.data.searchDonors('cohen', 1)).toHaveLength(1);
    expect((await t.data.searchDonors('levi'))[0]).not.toHaveProperty('tokens');
    // A donor picked from the list goes by account number; the queue shows the name all the same.
    const picked = await t.data.enqueue(cardCharge({ donor: { accountNum: 'D-2' } }));
    expect(picked.display.donorName).toBe('Sara Levi');
    const unknown = await t.data.enqueue(cardCharge({ donor: { accountNum: 'D-404' } }));
    expect(unknown.display.donorName).toBeNull();
  });
});

describe('retry and discard', () => {
  it('a declined card needs the card again; the copy gets a new opId and the old one says what replaced it', async () => {
    const t = await terminal();
    const declined = await t.data.enqueue(
      cardCharge({ card: { ccNum: DECLINED_VISA, expiry: '12/39', cvv: '123' } }),
    );
    await t.data.syncNow();
    expect((await t.data.waitForResult(declined.id, 0)).state).toBe('declined');
    const r = await refusal(t.data.retry(declined.id));
    expect(r.fields).toEqual([{ field: 'card.ccNum', message: 'enter it again' }]);
    const copy = await t.data.retryWithInstrument(declined.id, { card: { ccNum: VISA, cvv: '123' } });
    expect(copy.id).not.toBe(declined.id);
    expect(copy.request.uniqueTransactionId).toBe(copy.id);
    const old = (await t.data.listOutbox()).find((i) => i.id === declined.id);
    expect(old).toMatchObject({ state: 'discarded', discardReason: `retried as ${copy.localRef}` });
    await t.data.syncNow();
    expect((await t.data.waitForResult(copy.id, 0)).state).toBe('done');
  });

  it('a failed void is retried as a copy; discard is refused for charged or possibly charged items', async () => {
    const t = await terminal();
    t.server.decide = (op) =>
      op.kind === 'void'
        ? { status: 'Error', retryable: false, error: { errorCode: 'NOT_FOUND', message: 'No such receipt' } }
        : { status: 'Success', retryable: false };
    const v = await t.data.enqueueVoid('R9', null);
    const charged = await t.data.enqueue(cardCharge());
    await t.data.syncNow();
    await t.data.retry(v.id);
    const items = await t.data.listOutbox();
    expect(items.find((i) => i.id === v.id)?.state).toBe('discarded');
    expect(items.filter((i) => i.kind === 'void' && i.state === 'queued')).toHaveLength(1);
    expect((await refusal(t.data.discard(charged.id, 'oops'))).message).toMatch(/void it instead/);

    const lost = await t.data.enqueue(cardCharge());
    t.server.faults.push.push('answerLost');
    await t.data.syncNow();
    expect((await t.data.listOutbox()).find((i) => i.id === lost.id)).toMatchObject({
      state: 'queued',
      attempts: 1,
    });
    expect((await refusal(t.data.discard(lost.id, 'gone'))).message).toMatch(
      /may already have reached the server/,
    );

    t.setOnline(false);
    const never = await t.data.enqueue(cardCharge());
    await t.data.discard(never.id, 'donor changed mind');
    expect((await t.data.listOutbox({ states: ['discarded'] })).map((i) => i.id)).toContain(never.id);
  });
});
