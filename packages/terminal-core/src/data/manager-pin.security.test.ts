/**
 * The manager PIN against guessing: stored as PBKDF2 (salted, slow), 5 wrong tries lock it (the
 * right PIN included) for a time that doubles, the lockout survives a reload, and a PIN stored
 * by an older version as a bare SHA-256 is replaced by a PBKDF2 record on its first right entry.
 */
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import { describe, expect, it } from 'vitest';
import { freshDbName, testBridge } from '../../testing/test-support.ts';
import { createTerminalData } from './create-terminal-data.ts';
import {
  checkManagerPin,
  derivePinRecord,
  type LocalSettingsWithPinLock,
  lockedUntil,
  PIN_ITERATIONS,
  PIN_LOCK_BASE_MS,
  PIN_LOCK_MAX_MS,
  sha256Hex,
  verifyPinRecord,
} from './manager-pin.ts';

const T0 = Date.parse('2026-11-23T10:00:00Z');

function openData(dbName: string, indexedDB: IDBFactory) {
  return createTerminalData({ bridge: testBridge(), dbName, indexedDB, IDBKeyRange });
}

describe('manager PIN', () => {
  it('is stored as PBKDF2-SHA-256 with a random salt, never as a bare hash', async () => {
    const a = await derivePinRecord('2580');
    const b = await derivePinRecord('2580');
    expect(a).toMatch(
      new RegExp(`^pbkdf2-sha256\\$${PIN_ITERATIONS}\\$[A-Za-z0-9_-]{22}\\$[A-Za-z0-9_-]{43}$`),
    );
    expect(PIN_ITERATIONS).toBeGreaterThanOrEqual(100_000);
    expect(a).not.toBe(b);
    expect(a).not.toContain(await sha256Hex('2580'));
    expect((await verifyPinRecord('2580', a)).ok).toBe(true);
    expect((await verifyPinRecord('2581', a)).ok).toBe(false);
    expect((await verifyPinRecord('2580', `${a.slice(0, -2)}AA`)).ok).toBe(false);
  });

  it('5 wrong tries lock it; the right PIN is refused while locked; a reload keeps the lockout', async () => {
    const dbName = freshDbName();
    const indexedDB = new IDBFactory();
    let data = openData(dbName, indexedDB);
    try {
      await data.saveLocalSettings({ managerPinHash: await derivePinRecord('2580') });
      // The attack: guess PINs one after the other.
      const verdicts = [];
      for (const guess of ['0000', '1111', '1234', '9999', '4321']) {
        verdicts.push(await checkManagerPin(data, guess, T0));
      }
      expect(verdicts.slice(0, 4).map((v) => v.kind)).toEqual(['wrong', 'wrong', 'wrong', 'wrong']);
      expect(verdicts[3]).toEqual({ kind: 'wrong', triesLeft: 1 });
      expect(verdicts[4]).toEqual({ kind: 'locked', until: T0 + PIN_LOCK_BASE_MS });
      // The right PIN during the lockout: refused without being checked.
      expect(await checkManagerPin(data, '2580', T0 + 60_000)).toEqual({
        kind: 'locked',
        until: T0 + PIN_LOCK_BASE_MS,
      });
      // A reload (a new data layer on the same database) does not reset the count.
      data.close();
      data = openData(dbName, indexedDB);
      expect((await checkManagerPin(data, '2580', T0 + 4 * 60_000)).kind).toBe('locked');
      // After the lockout: 5 more wrong tries lock it for twice as long.
      const later = T0 + PIN_LOCK_BASE_MS + 1;
      for (let i = 0; i < 4; i++) expect((await checkManagerPin(data, '0000', later)).kind).toBe('wrong');
      expect(await checkManagerPin(data, '0000', later)).toEqual({
        kind: 'locked',
        until: later + 2 * PIN_LOCK_BASE_MS,
      });
      // Once it has passed, the right PIN opens and clears the count.
      const after = later + 2 * PIN_LOCK_BASE_MS + 1;
      expect(await checkManagerPin(data, '2580', after)).toEqual({ kind: 'ok' });
      expect(((await data.getLocalSettings()) as LocalSettingsWithPinLock).pinLock).toEqual({
        failures: 0,
        lockouts: 0,
        lockedUntil: null,
      });
    } finally {
      data.close();
    }
  });

  it('a lockout set while the clock was years ahead ends at most the longest lockout from now', () => {
    const now = Date.parse('2026-11-23T12:00:00Z');
    const local = { pinLock: { failures: 0, lockouts: 3, lockedUntil: '2031-01-01T00:00:00.000Z' } };
    expect(lockedUntil(local as never, now)).toBe(now + PIN_LOCK_MAX_MS);
    const soon = { pinLock: { failures: 0, lockouts: 1, lockedUntil: '2026-11-23T12:05:00.000Z' } };
    expect(lockedUntil(soon as never, now)).toBe(now + 5 * 60_000);
    expect(lockedUntil(soon as never, now + 6 * 60_000)).toBeNull();
  });

  it('a legacy SHA-256 PIN is checked once, then replaced by a PBKDF2 record', async () => {
    const data = openData(freshDbName(), new IDBFactory());
    try {
      const legacy = await sha256Hex('1357');
      await data.saveLocalSettings({ managerPinHash: legacy });
      expect(await checkManagerPin(data, '7531', T0)).toEqual({ kind: 'wrong', triesLeft: 4 });
      expect((await data.getLocalSettings()).managerPinHash).toBe(legacy);
      expect(await checkManagerPin(data, '1357', T0)).toEqual({ kind: 'ok' });
      const upgraded = (await data.getLocalSettings()).managerPinHash!;
      expect(upgraded).toMatch(/^pbkdf2-sha256\$/);
      expect((await verifyPinRecord('1357', upgraded)).ok).toBe(true);
      // The old hash opens nothing any more (it is gone).
      expect(JSON.stringify(await data.getLocalSettings())).not.toContain(legacy);
      expect(await checkManagerPin(data, '1357', T0)).toEqual({ kind: 'ok' });
    } finally {
      data.close();
    }
  });

  it('with no PIN set, what needs one is refused', async () => {
    const data = openData(freshDbName(), new IDBFactory());
    try {
      expect(await checkManagerPin(data, '1234', T0)).toEqual({ kind: 'no-pin' });
    } finally {
      data.close();
    }
  });
});
