/**
 * The terminal's IndexedDB database: the one module that knows the Dexie schema. Every table and
 * index is declared here, in numbered versions, so that a terminal that has been offline through
 * an upgrade opens its old queue with the new code (Dexie upgrades in place; rows are never
 * dropped). Add a `version(n + 1)` for any change; never edit a published version.
 */

import type { RefCampaign, RefPerson, RefReason, SealedBox } from '@kupah/contracts';
import Dexie, { type Table } from 'dexie';
import type { ShiftClose } from './shift.ts';
import type { LocalSettings, OutboxItem, Pairing } from './terminal-data.ts';

/** An outbox row: the item the UI sees, plus what only the data layer and the sync loop read. */
export interface OutboxRow extends OutboxItem {
  /** Entry order on this device (also the number in `localRef`); pushes go oldest first by it. */
  seq: number;
  /** The device the item was taken on: a re-paired device never sends an old pairing's items. */
  deviceId: string;
  /**
   * Card or bank fields sealed under the server's key; null when the request has none. Deleted
   * (absent) once the item is final: nothing sends it any more, and no card number or CVV is
   * kept after the answer (PCI DSS), not even sealed.
   */
  sealed?: SealedBox | null;
  /** Taken while the terminal was offline (its offline limits applied); sent with the item. */
  offline?: boolean;
  /**
   * When the outcome was shown to the cashier on the result screen (the donor was there). A
   * decline nobody saw at the time is the one the "declined after sending" alarm is about.
   */
  outcomeSeenAt?: string;
}

/**
 * A donor with its search tokens (multi-entry index): name words, account, the last digits of
 * masked phones. Contact details are only masked and keyed-hashed (`contactHashes`, indexed).
 */
export interface DonorRow extends RefPerson {
  tokens: string[];
}

/**
 * The device credential at rest. `os`: protected by the operating system (Electron safeStorage).
 * `webcrypto`: encrypted with a non-extractable AES-GCM key that lives only in this database (a
 * script can use it but never read it out).
 */
export type StoredCredential =
  | { scheme: 'os'; protectedText: string }
  | { scheme: 'webcrypto'; key: CryptoKey; iv: Uint8Array<ArrayBuffer>; ciphertext: ArrayBuffer };

/** What the last sync run concluded, kept so that a restarted terminal knows whether it is offline. */
export interface StoredSyncState {
  lastSyncAt: string | null;
  lastError: string | null;
  /** Consecutive failed runs (drives the back-off). */
  failures: number;
}

/** The key-value table's keys and the type stored under each. */
export interface KvValues {
  pairing: Pairing;
  /** When the current shift opened (the last close, or the pairing). */
  shiftOpenedAt: string;
  /** The latest shift closes, newest first, with whether the server recorded them. */
  shiftCloses: ShiftClose[];
  credential: StoredCredential;
  pullCursor: string;
  localSettings: LocalSettings;
  /** The last `seq` handed out. */
  outboxSeq: number;
  /**
   * Sum of the amounts of unsent items (minor units, all currencies): kept in the transactions
   * that change it, so the offline device limit is one read, not a scan of the queue.
   */
  unsentTotalMinor: number;
  /** Set when the server answered DEVICE_REVOKED; cleared by pairing again. */
  revoked: { at: string; message: string };
  /**
   * The server's signing key, pinned when the device was paired (of that pairing's device): an
   * envelope key is adopted only when it verifies under it (`data/pairing-service.ts`).
   */
  signingKey: { deviceId: string; jwk: { kty: 'EC'; crv: 'P-256'; x: string; y: string } };
  syncState: StoredSyncState;
  /** The organisation's contact key (base64url, from the pull): the HMAC key of `contactHashes`. */
  contactKey: string;
  /** Outbox items whose e-mailed receipt the server does not have yet (`receipt.state` pending). */
  receiptsPending: string[];
}
export type KvKey = keyof KvValues;

export interface KvRow<K extends KvKey = KvKey> {
  key: K;
  value: KvValues[K];
}

export interface DatabaseDeps {
  indexedDB?: IDBFactory;
  IDBKeyRange?: typeof IDBKeyRange;
}

/** The first schema (Dexie version 1): what earlier versions of the terminal created. */
export const SCHEMA_V1 = {
  // [state+seq]: the sync loop's "oldest queued first" and the queue screen's lists per state.
  outbox: 'id, state, createdAt, expiresAt, seq, [state+seq]',
  campaigns: 'campaignNum',
  reasons: 'reasonNum, campaignNum',
  collectors: 'accountNum',
  donors: 'accountNum, *tokens',
  kv: 'key',
} as const;

export class TerminalDatabase extends Dexie {
  outbox!: Table<OutboxRow, string>;
  campaigns!: Table<RefCampaign, number>;
  reasons!: Table<RefReason, number>;
  collectors!: Table<RefPerson, string>;
  donors!: Table<DonorRow, string>;
  kv!: Table<KvRow, KvKey>;

  constructor(name: string, deps: DatabaseDeps = {}) {
    super(name, {
      ...(deps.indexedDB ? { indexedDB: deps.indexedDB } : {}),
      ...(deps.IDBKeyRange ? { IDBKeyRange: deps.IDBKeyRange } : {}),
    });
    this.version(1).stores(SCHEMA_V1);
    // 2: donors and collectors arrive with contact details masked plus keyed hashes (indexed, to
    // find a donor by an exact phone number or e-mail address). Rows pulled before held phone
    // numbers and e-mail addresses in clear: they are dropped and pulled again from the start.
    this.version(2)
      .stores({ donors: 'accountNum, *tokens, *contactHashes' })
      .upgrade(async (tx) => {
        await tx.table('donors').clear();
        await tx.table('collectors').clear();
        await tx.table('kv').delete('pullCursor');
      });
    // 3: final items (done, declined, error, expired, discarded) no longer keep their sealed card
    // or bank data; rows written before keep it in every state: it is deleted here.
    this.version(3)
      .stores({})
      .upgrade(async (tx) => {
        await tx
          .table('outbox')
          .toCollection()
          .modify((row: Partial<OutboxRow>) => {
            if (row.state !== 'queued' && row.state !== 'sending' && 'sealed' in row) delete row.sealed;
          });
      });
  }
}

/** Reads one key of the key-value table (inside or outside a transaction). */
export async function readKv<K extends KvKey>(
  db: TerminalDatabase,
  key: K,
): Promise<KvValues[K] | undefined> {
  const row = await db.kv.get(key);
  return row?.value as KvValues[K] | undefined;
}

export async function writeKv<K extends KvKey>(
  db: TerminalDatabase,
  key: K,
  value: KvValues[K],
): Promise<void> {
  await db.kv.put({ key, value } satisfies KvRow<K>);
}
