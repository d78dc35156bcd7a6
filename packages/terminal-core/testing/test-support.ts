/**
 * Test support for the data layer and the sync loop: a bridge as the web build has it, a fresh
 * fake-indexeddb per test, and a terminal paired with the in-test fake server. Imported by tests
 * only.
 */
import type { TerminalBridge } from '@kupah/contracts';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';
import {
  createTerminalData,
  type TerminalDataInstance,
  type TerminalDataOptions,
} from '../src/data/create-terminal-data.ts';
import { TerminalDatabase } from '../src/data/terminal-database.ts';
import type { SyncLocks } from '../src/sync/sync-lock.ts';
import { createFakeDeviceServer, type FakeDeviceServer } from './fake-device-server.ts';

export const VISA = '4242424242424242';
export const DECLINED_VISA = '4000000000000002';
export const GOOD_ROUTING = '021000021';

export function testBridge(over: Partial<TerminalBridge> = {}): TerminalBridge {
  return {
    platform: 'web',
    appVersion: async () => 'test-1.0',
    hostName: async () => null,
    timeZone: () => 'America/New_York',
    location: async () => ({ locationName: 'Main hall', latitude: 40.71, longitude: -74.0 }),
    printReceipt: async () => ({ printed: false }),
    secrets: null,
    setKiosk: async () => {},
    ...over,
  };
}

let dbCounter = 0;
export const freshDbName = (): string => `kupah-test-${++dbCounter}-${Math.random().toString(36).slice(2)}`;

/** A card charge entry as the amount screen builds it. */
export const cardCharge = (over: Record<string, unknown> = {}) => ({
  kind: 'charge' as const,
  request: {
    amount: 18,
    currency: 'USD' as const,
    paymentMethodId: 'Credit_Card' as const,
    card: { ccNum: VISA, expiry: '12/39', cvv: '123' },
    donor: { firstName: 'Moshe', lastName: 'Cohen' },
    ...over,
  },
});

export interface TestTerminal {
  data: TerminalDataInstance;
  server: FakeDeviceServer;
  indexedDB: IDBFactory;
  dbName: string;
  /** A second "tab": another instance on the same database. */
  openTab(over?: Partial<TerminalDataOptions>): TerminalDataInstance;
  /** Every row of every table, as JSON (for "nothing secret is stored" scans). */
  dumpDatabase(): Promise<string>;
  /** Controls `navigator.onLine` as the terminal sees it. */
  setOnline(online: boolean): void;
  clock: { now: Date };
}

export async function pairedTerminal(
  opts: {
    server?: FakeDeviceServer;
    bridge?: TerminalBridge;
    locks?: SyncLocks;
    pair?: boolean;
    now?: Date;
  } = {},
): Promise<TestTerminal> {
  const server = opts.server ?? (await createFakeDeviceServer());
  const indexedDB = new IDBFactory();
  const dbName = freshDbName();
  const clock = { now: opts.now ?? new Date('2026-03-01T10:00:00Z') };
  let online = true;
  const openTab = (over: Partial<TerminalDataOptions> = {}) =>
    createTerminalData({
      bridge: opts.bridge ?? testBridge(),
      dbName,
      indexedDB,
      IDBKeyRange,
      fetch: server.fetch,
      now: () => clock.now,
      online: () => online,
      random: () => 0.5,
      ...(opts.locks ? { locks: opts.locks } : {}),
      ...over,
    });
  const data = openTab();
  if (opts.pair !== false) await data.pair(server.url, server.pairingCode, null);
  return {
    data,
    server,
    indexedDB,
    dbName,
    openTab,
    clock,
    setOnline: (v) => {
      online = v;
    },
    async dumpDatabase() {
      const db = new TerminalDatabase(dbName, { indexedDB, IDBKeyRange });
      try {
        const tables = await Promise.all(db.tables.map(async (t) => [t.name, await t.toArray()] as const));
        return JSON.stringify(Object.fromEntries(tables), (_k, v: unknown) => {
          if (v instanceof ArrayBuffer) return { bytes: new TextDecoder('latin1').decode(v) };
          if (ArrayBuffer.isView(v)) {
            return {
              bytes: new TextDecoder('latin1').decode(new Uint8Array(v.buffer, v.byteOffset, v.byteLength)),
            };
          }
          return v;
        });
      } finally {
        db.close();
      }
    },
  };
}
