/**
 * `createTerminalData()`: the terminal's durable layer behind the `TerminalData` contract — the
 * Dexie outbox and reference cache, pairing, local settings, and the sync loop that forwards the
 * outbox. Everything platform-specific is injectable (IndexedDB, fetch, clock, locks, randomness)
 * so that Node tests and benchmarks run this same code on fake-indexeddb against a real server.
 *
 * How an entry becomes an item is `outbox-entry.ts`; pairing is `pairing-service.ts`; the
 * loop is `../sync/`. This module wires them together and answers the contract.
 */

import type { TerminalBridge } from '@kupah/contracts';
import { createDeviceApi } from '../sync/device-api.ts';
import { defaultSyncLocks, type SyncLocks } from '../sync/sync-lock.ts';
import { createSyncLoop, type OnlineEvents } from '../sync/sync-loop.ts';
import { isBeingConfirmed } from './being-confirmed.ts';
import { createDexieSyncStore } from './dexie-sync-store.ts';
import { mergeLocalSettings, readLocalSettings } from './local-settings.ts';
import { checkManagerPin as checkPin, derivePinRecord } from './manager-pin.ts';
import { createOutboxChanges } from './outbox-changes.ts';
import { asRecord, createOutboxEntry, NeedsOnlineAuthorisation } from './outbox-entry.ts';
import {
  DiscardRefused,
  discardItem,
  getRow,
  isFinal,
  listItems,
  markOutcomeSeen,
  RETRYABLE_STATES,
  summarise,
  toItem,
} from './outbox-repo.ts';
import { envelopeKeyGuard, type PairingChange, pairDevice, unpairDevice } from './pairing-service.ts';
import { requestReceipt } from './receipt-requests.ts';
import { listCampaigns, listCollectors, listReasons, searchDonors } from './reference-repo.ts';
import { closeShift, listShiftCloses, summariseShift } from './shift.ts';
import {
  type DonationEntry,
  type LocalSettings,
  type OutboxItem,
  OutboxRefusal,
  type OutboxState,
  type ReenteredInstrument,
  type TerminalData,
} from './terminal-data.ts';
import { type OutboxRow, readKv, TerminalDatabase, writeKv } from './terminal-database.ts';

export interface TerminalDataOptions {
  bridge: TerminalBridge;
  /** IndexedDB database name (default `kupah-terminal`); tests use a fresh one each. */
  dbName?: string;
  fetch?: typeof fetch;
  now?: () => Date;
  indexedDB?: IDBFactory;
  IDBKeyRange?: typeof IDBKeyRange;
  /** One sync at a time per device (default: Web Locks, else an in-process mutex). */
  locks?: SyncLocks;
  /** For the back-off's jitter. */
  random?: () => number;
  /** Between good sync runs (default 30 s). */
  syncIntervalMs?: number;
  /** Whether the platform is online (default `navigator.onLine`, true where there is none). */
  online?: () => boolean;
  /** Time limit of a push (default 120 s: up to 100 charges at the gateway). */
  pushTimeoutMs?: number;
  /** Time limit of pair and pull requests (default 30 s). */
  requestTimeoutMs?: number;
  /** Pushes out at once during a sync run (default 3). */
  pushesInFlight?: number;
  /** Operations per push (default and at most 100). */
  pushBatchSize?: number;
  /** An item being confirmed is asked about again this long after its last attempt (default 30 s). */
  confirmRecheckMs?: number;
}

/** `TerminalData` with every optional member present. */
export type TerminalDataInstance = TerminalData &
  Required<Pick<TerminalData, 'retryWithInstrument' | 'setManagerPin' | 'checkManagerPin' | 'close'>>;

const DEFAULT_DB_NAME = 'kupah-terminal';
const RESULT_POLL_MS = 1_000;

type Kind = OutboxItem['kind'];

const navigatorOnline = (): boolean =>
  (globalThis as { navigator?: { onLine?: boolean } }).navigator?.onLine !== false;

function windowEvents(): OnlineEvents | null {
  const g = globalThis as Partial<OnlineEvents>;
  if (typeof g.addEventListener !== 'function' || typeof g.removeEventListener !== 'function') return null;
  return {
    addEventListener: (type, listener) => g.addEventListener?.(type, listener),
    removeEventListener: (type, listener) => g.removeEventListener?.(type, listener),
  };
}

export function createTerminalData(options: TerminalDataOptions): TerminalDataInstance {
  const { bridge } = options;
  const dbName = options.dbName ?? DEFAULT_DB_NAME;
  const now = options.now ?? (() => new Date());
  const db = new TerminalDatabase(dbName, { indexedDB: options.indexedDB, IDBKeyRange: options.IDBKeyRange });
  const changes = createOutboxChanges(dbName);
  const store = createDexieSyncStore(db, bridge, changes);
  const api = createDeviceApi({
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    pushTimeoutMs: options.pushTimeoutMs,
    timeoutMs: options.requestTimeoutMs,
  });
  const loop = createSyncLoop({
    store,
    api,
    locks: options.locks ?? defaultSyncLocks(),
    appVersion: () => bridge.appVersion(),
    now,
    random: options.random ?? Math.random,
    intervalMs: options.syncIntervalMs,
    platformOnline: options.online ?? navigatorOnline,
    events: windowEvents(),
    isVisible: () =>
      (globalThis as { document?: { visibilityState?: string } }).document?.visibilityState !== 'hidden',
    maxPushesInFlight: options.pushesInFlight,
    maxBatchOperations: options.pushBatchSize,
    confirmRecheckMs: options.confirmRecheckMs,
    keyGuard: envelopeKeyGuard(db),
  });
  const entry = createOutboxEntry({
    db,
    bridge,
    now,
    isOffline: () => loop.isOffline(),
    written: () => {
      changes.notify();
      loop.nudge();
    },
  });
  const { queueDonation, queueRecord, requestForCopy } = entry;

  /**
   * Over the offline limits, an entry is written only if a sync reaches the server right now
   * (then it is sent at once); if it cannot, the entry is refused — its card data never stored.
   */
  async function withOnlineAuthorisation(queue: (verifiedOnline: boolean) => Promise<OutboxItem>) {
    try {
      return await queue(false);
    } catch (err) {
      if (!(err instanceof NeedsOnlineAuthorisation)) throw err;
      await loop.syncNow();
      if (loop.isOffline()) throw err.refusal;
      return queue(true);
    }
  }
  let persistenceAsked = false;

  /** Ask the browser not to evict this origin's storage under pressure (the queue is money). */
  function requestPersistentStorage(): void {
    if (persistenceAsked) return;
    persistenceAsked = true;
    const storage = (globalThis as { navigator?: { storage?: Partial<StorageManager> } }).navigator?.storage;
    if (typeof storage?.persist !== 'function' || typeof storage.persisted !== 'function') return;
    void storage
      .persisted()
      .then((already) => already || storage.persist?.())
      .catch(() => false);
  }

  const getLocalSettings = (): Promise<LocalSettings> => readLocalSettings(db);

  async function saveLocalSettings(patch: Partial<LocalSettings>): Promise<LocalSettings> {
    return db.transaction('rw', db.kv, async () => {
      const merged = mergeLocalSettings(await getLocalSettings(), patch);
      await writeKv(db, 'localSettings', merged);
      return merged;
    });
  }

  /** After pairing again or unpairing: stranded items shown, credential forgotten, loop told. */
  async function pairingChanged(change: PairingChange): Promise<void> {
    if (change.stranded > 0) changes.notify();
    store.forgetCredential();
    await loop.sessionChanged();
  }

  async function findRow(id: string): Promise<OutboxRow> {
    const row = await getRow(db, id);
    if (!row) throw new OutboxRefusal('INVALID', `There is no outbox item ${id}`);
    return row;
  }

  function waitForResult(id: string, timeoutMs: number): Promise<OutboxItem> {
    return new Promise<OutboxItem>((resolve, reject) => {
      let settled = false;
      const cleanup: (() => void)[] = [];
      const finish = (fn: () => void) => {
        if (settled) return;
        settled = true;
        for (const c of cleanup) c();
        fn();
      };
      const check = async (final: boolean) => {
        try {
          const row = await getRow(db, id);
          if (!row) finish(() => reject(new OutboxRefusal('INVALID', `There is no outbox item ${id}`)));
          // Being confirmed: the server has answered for now; its outcome comes later.
          else if (final || isFinal(row.state) || isBeingConfirmed(row)) finish(() => resolve(toItem(row)));
        } catch (err) {
          finish(() => reject(err));
        }
      };
      cleanup.push(changes.subscribe(() => void check(false)));
      // Also polled: a platform without BroadcastChannel hears nothing from other tabs.
      const poll = setInterval(() => void check(false), RESULT_POLL_MS);
      const timer = setTimeout(() => void check(true), Math.max(0, timeoutMs));
      cleanup.push(
        () => clearInterval(poll),
        () => clearTimeout(timer),
      );
      void check(false);
    });
  }

  const data: TerminalDataInstance = {
    // Pairing ------------------------------------------------------------------------------
    getPairing: async () => (await readKv(db, 'pairing')) ?? null,

    async pair(serverUrl, pairingCode, deviceName) {
      const change = await pairDevice({ db, bridge, api, now }, serverUrl, pairingCode, deviceName);
      requestPersistentStorage();
      await pairingChanged(change);
      return change.pairing!;
    },

    async unpair() {
      await pairingChanged(await unpairDevice({ db }));
    },

    // Local settings -----------------------------------------------------------------------
    getLocalSettings,
    saveLocalSettings,
    async setManagerPin(pin) {
      await saveLocalSettings({ managerPinHash: pin === null ? null : await derivePinRecord(pin) });
    },
    async checkManagerPin(pin) {
      // Counted against the lockout like every other try; no PIN set is not a right PIN.
      return (await checkPin({ getLocalSettings, saveLocalSettings }, pin)).kind === 'ok';
    },

    // Outbox -------------------------------------------------------------------------------
    enqueue: (entry: DonationEntry) =>
      withOnlineAuthorisation((verifiedOnline) =>
        queueDonation(entry.kind, { ...entry.request }, entry.swiped ?? false, undefined, { verifiedOnline }),
      ),
    enqueueVoid: (receiptNum, reason) => queueRecord('void', { receiptNum, reason }),
    enqueueDonor: (request) => queueRecord('saveDonor', request),
    waitForResult,
    shiftSummary: () => summariseShift(db, now()),
    async closeShift(closedBy: string | null) {
      const close = await closeShift(db, now(), closedBy);
      loop.nudge();
      return close;
    },
    listShiftCloses: () => listShiftCloses(db),
    async markOutcomeSeen(id: string) {
      await markOutcomeSeen(db, id, now());
      changes.notify();
    },
    async requestReceipt(id, email, language) {
      const item = await requestReceipt(db, id, email, language, now());
      changes.notify();
      void loop.syncNow();
      return item;
    },
    listOutbox: (filter) => listItems(db, filter),
    summary: () => summarise(db, now()),

    async retry(id) {
      const row = await findRow(id);
      if (row.state === 'queued' || row.state === 'sending') {
        void loop.syncNow();
        return;
      }
      if (!(RETRYABLE_STATES as readonly OutboxState[]).includes(row.state)) {
        throw new OutboxRefusal('INVALID', `${row.localRef} is ${row.state}: there is nothing to retry`);
      }
      // `kid` stays when the sealed box itself is deleted (an item's box goes once it is final).
      if (row.kid) {
        const field = row.method === 'ACH' ? 'bankAccount.accountNum' : 'card.ccNum';
        throw new OutboxRefusal(
          'INVALID',
          `${row.localRef}: the ${row.method === 'ACH' ? 'bank account' : 'card'} details were sealed for the first attempt only; enter them again to retry`,
          [{ field, message: 'enter it again' }],
        );
      }
      if (row.kind === 'charge' || row.kind === 'schedule') {
        const kind = row.kind;
        await withOnlineAuthorisation((verifiedOnline) =>
          queueDonation(kind, requestForCopy(row), false, row, { verifiedOnline }),
        );
      } else {
        await queueRecord(row.kind, requestForCopy(row), row);
      }
    },

    async retryWithInstrument(id: string, instrument: ReenteredInstrument) {
      const row = await findRow(id);
      const kind: Kind = row.kind;
      if (!(RETRYABLE_STATES as readonly OutboxState[]).includes(row.state)) {
        throw new OutboxRefusal('INVALID', `${row.localRef} is ${row.state}: there is nothing to retry`);
      }
      if (kind !== 'charge' && kind !== 'schedule') {
        throw new OutboxRefusal('INVALID', `${row.localRef} carries no card or bank details: use retry`);
      }
      const request = requestForCopy(row);
      if (instrument.card) {
        const { expiry, ...typed } = instrument.card;
        request.card = { ...asRecord(request.card), ...typed, ...(expiry ? { expiry } : {}) };
      }
      if (instrument.bankAccount)
        request.bankAccount = { ...asRecord(request.bankAccount), ...instrument.bankAccount };
      return withOnlineAuthorisation((verifiedOnline) =>
        queueDonation(kind, request, instrument.swiped ?? false, row, { verifiedOnline }),
      );
    },

    async discard(id, reason) {
      try {
        await discardItem(db, id, reason);
      } catch (err) {
        if (err instanceof DiscardRefused) throw new OutboxRefusal('INVALID', err.message);
        throw err;
      }
      changes.notify();
    },

    onOutboxChange: (listener) => changes.subscribe(listener),

    // Reference data -----------------------------------------------------------------------
    searchDonors: (query, limit = 20) => searchDonors(db, query, limit),
    campaigns: () => listCampaigns(db),
    reasons: () => listReasons(db),
    collectors: () => listCollectors(db),

    // Sync ---------------------------------------------------------------------------------
    syncNow: () => loop.syncNow(),
    syncStatus: () => loop.status(),
    onSyncStatus: (listener) => loop.onStatus(listener),
    start() {
      requestPersistentStorage();
      loop.start();
    },
    stop: () => loop.stop(),
    close() {
      loop.stop();
      changes.close();
      db.close();
    },
  };
  return data;
}
