/**
 * The contract between the terminal's durable layer (Dexie outbox, reference cache, pairing,
 * sync loop: `data/` and `sync/`) and its UI (`store/`, `screens/`). Types only: the UI codes
 * against this, `createTerminalData()` implements it.
 */

import type {
  ChargeRequestInput,
  Currency,
  DeviceSettings,
  EnvelopeKey,
  OpResult,
  PaymentMethodId,
  RefCampaign,
  RefPerson,
  RefReason,
  ScheduleRequestInput,
  SyncOperationKind,
} from '@kupah/contracts';
import type { ShiftClose, ShiftSummary } from './shift.ts';

/**
 * queued → sending → done | declined | error; expired and discarded are final, set on the device.
 * "Being confirmed" is no state of its own: a `queued` item whose last answer was PAYMENT_PENDING
 * or in progress (see `being-confirmed.ts`).
 */
export type OutboxState = 'queued' | 'sending' | 'done' | 'declined' | 'error' | 'expired' | 'discarded';

export interface OutboxItem {
  /** = opId = the request's uniqueTransactionId (a GUID made at entry). */
  id: string;
  /** Short local reference shown to the cashier before a receipt number exists (e.g. "K1-0042"). */
  localRef: string;
  kind: SyncOperationKind;
  state: OutboxState;
  /** deviceCreatedDate, ISO UTC. */
  createdAt: string;
  /** createdAt + the org's expiryHours. */
  expiresAt: string;
  amountMinor: number;
  currency: Currency | null;
  method: PaymentMethodId | null;
  /** What the queue screen shows: never a full card number. */
  display: {
    donorName: string | null;
    brand: string | null;
    last4: string | null;
    frequency: string | null;
    collectorAccountNum: string | null;
  };
  /** The request without secrets (card number, CVV, bank account and routing numbers). */
  request: Record<string, unknown>;
  /** Envelope key id the secrets were sealed with; null when nothing was sealed. */
  kid: string | null;
  attempts: number;
  lastAttemptAt: string | null;
  /** The server's answer once forwarded. */
  result: OpResult | null;
  receiptNum: string | null;
  scheduleNum: string | null;
  error: { errorCode: string; message: string } | null;
  discardReason: string | null;
  /** The donor asked for the receipt by e-mail (result screen); absent when nobody did. */
  receipt?: ReceiptRequest | null;
}

/**
 * A receipt the donor asked for by e-mail. `pending` until the server has it: it travels with the
 * payment when the payment is still to be forwarded, else it is sent on its own
 * (`POST /v1/Device/Receipt/Send`) once the payment has its receipt number.
 */
export interface ReceiptRequest {
  email: string;
  language: 'en' | 'he';
  requestedAt: string;
  state: 'pending' | 'sent' | 'failed';
  /** The address the last push of the payment carried (null: the push carried none). */
  inPush: string | null;
  /** Why it failed (the server's message), for the queue screen. */
  error: string | null;
}

export interface Pairing {
  serverUrl: string;
  deviceId: string;
  settings: DeviceSettings;
  encryptionKey: EnvelopeKey;
  pairedAt: string;
}

/** Settings the cashier or manager sets on this device. */
export interface LocalSettings {
  deviceName: string | null;
  location: { locationName: string | null; latitude: number | null; longitude: number | null };
  language: 'en' | 'he';
  mode: 'cashier' | 'kiosk' | 'collector';
  /** Collector every donation is attributed to in collector mode. */
  collectorAccountNum: string | null;
  /** SHA-256 (hex) of the manager PIN; null = not set. */
  managerPinHash: string | null;
  kioskIdleSeconds: number;
}

export type SyncPhase = 'idle' | 'pushing' | 'pulling' | 'waiting' | 'revoked' | 'unpaired';

export interface SyncStatus {
  online: boolean;
  phase: SyncPhase;
  /** Items sent / items to send in the current run. */
  progress: { sent: number; total: number } | null;
  lastSyncAt: string | null;
  lastError: string | null;
  /** When the next automatic attempt is due (back-off), ISO. */
  nextAttemptAt: string | null;
}

export interface QueueSummary {
  /** Items not yet forwarded (queued, sending, error-retryable), those being confirmed included. */
  pending: number;
  /** Sum of their amounts per currency, minor units. */
  pendingTotals: Partial<Record<Currency, number>>;
  /**
   * Of the pending items, those being confirmed: the server answered that the outcome is not known
   * yet (PAYMENT_PENDING, in progress). They may have been charged; they are asked about again.
   */
  confirming: number;
  /** Sum of their amounts per currency, minor units. */
  confirmingTotals: Partial<Record<Currency, number>>;
  declined: number;
  expiringSoon: number;
  expired: number;
}

/** Why `enqueue` refused an entry (shown to the cashier). */
export class OutboxRefusal extends Error {
  constructor(
    readonly code: 'OVER_PAYMENT_LIMIT' | 'OVER_DEVICE_LIMIT' | 'NOT_PAIRED' | 'INVALID',
    message: string,
    readonly fields: { field: string; message: string }[] = [],
  ) {
    super(message);
    this.name = 'OutboxRefusal';
  }
}

/** Why pairing (or unpairing) did not happen (shown to the cashier). */
export class PairingError extends Error {
  constructor(
    readonly code:
      | 'PAIRING_CODE_INVALID'
      | 'UNREACHABLE'
      | 'SERVER_ERROR'
      /** Items of the current pairing are not forwarded yet: pairing again would strand them. */
      | 'QUEUE_NOT_EMPTY',
    message: string,
  ) {
    super(message);
    this.name = 'PairingError';
  }
}

export type DonationEntry =
  | {
      kind: 'charge';
      request: Omit<ChargeRequestInput, 'uniqueTransactionId' | 'orgGUID' | 'orgGuid'>;
      /** The card was swiped: no CVV is required. */
      swiped?: boolean;
    }
  | {
      kind: 'schedule';
      request: Omit<ScheduleRequestInput, 'uniqueTransactionId' | 'orgGUID' | 'orgGuid'>;
      swiped?: boolean;
    };

/** Card or bank details typed again to retry a declined, failed or expired item. */
export interface ReenteredInstrument {
  card?: { ccNum: string; cvv?: string | null; expiry?: string | null } | null;
  bankAccount?: { accountNum: string; routingNum: string } | null;
  swiped?: boolean;
}

export interface TerminalData {
  // Pairing
  getPairing(): Promise<Pairing | null>;
  pair(serverUrl: string, pairingCode: string, deviceName: string | null): Promise<Pairing>;
  unpair(): Promise<void>;

  // Local settings
  getLocalSettings(): Promise<LocalSettings>;
  saveLocalSettings(patch: Partial<LocalSettings>): Promise<LocalSettings>;
  /** Stores a PBKDF2 record of a new manager PIN (null clears it). */
  setManagerPin?(pin: string | null): Promise<void>;
  /** True when `pin` is the manager PIN; false when it is wrong, none is set, or tries are locked out. */
  checkManagerPin?(pin: string): Promise<boolean>;

  // Outbox
  /**
   * Validates (contracts + instruments), enforces the offline limits when offline, seals the
   * secrets, writes the item durably, then asks the sync loop to forward it. Throws OutboxRefusal.
   */
  enqueue(entry: DonationEntry): Promise<OutboxItem>;
  /** Queue a void of a forwarded payment. */
  enqueueVoid(receiptNum: string, reason: string | null): Promise<OutboxItem>;
  /** Queue a donor save (SaveDonor body without orgGUID). */
  enqueueDonor(request: Record<string, unknown>): Promise<OutboxItem>;
  /**
   * Resolves when the item reaches a final state, or is being confirmed (the server answered that
   * its outcome is not known yet: the final answer comes later), or `timeoutMs` passes (then the
   * current item).
   */
  waitForResult(id: string, timeoutMs: number): Promise<OutboxItem>;
  /** The result screen showed this item's final outcome (a decline seen then raises no alarm). */
  markOutcomeSeen(id: string): Promise<void>;
  /**
   * E-mail this donation's receipt to `email` (in `language`): kept with the item and sent once the
   * server has the payment (with it, or on its own afterwards), offline too. Throws OutboxRefusal
   * for an address that is not one, or an item that took no money (declined, failed, discarded).
   */
  requestReceipt?(id: string, email: string, language: 'en' | 'he'): Promise<OutboxItem>;
  // End of shift
  /** What this device took since the shift opened (succeeded, voided, declined, still queued). */
  shiftSummary(): Promise<ShiftSummary>;
  /** Closes the shift (a new one opens); the server is told on the next sync. */
  closeShift(closedBy: string | null): Promise<ShiftClose>;
  /** The latest closes, newest first, with the server's totals once it recorded them. */
  listShiftCloses(): Promise<ShiftClose[]>;
  listOutbox(filter?: { states?: OutboxState[]; limit?: number }): Promise<OutboxItem[]>;
  summary(): Promise<QueueSummary>;
  /**
   * Sends a queued item now; queues a copy (new opId) of a failed item that carries no card or
   * bank details, and marks the old one discarded ("retried as …"). Throws OutboxRefusal for an
   * item whose card or bank details would have to be typed again (see `retryWithInstrument`).
   */
  retry(id: string): Promise<void>;
  /**
   * A declined, failed or expired card/bank item taken again with the details typed anew: a copy
   * with a new opId is validated, sealed and queued; the old item is discarded ("retried as …").
   */
  retryWithInstrument?(id: string, instrument: ReenteredInstrument): Promise<OutboxItem>;
  discard(id: string, reason: string): Promise<void>;
  /** Called on every change of the outbox (for live lists). Returns an unsubscribe function. */
  onOutboxChange(listener: () => void): () => void;

  // Reference data (offline cache)
  searchDonors(query: string, limit?: number): Promise<RefPerson[]>;
  campaigns(): Promise<RefCampaign[]>;
  reasons(): Promise<RefReason[]>;
  collectors(): Promise<RefPerson[]>;

  // Sync
  syncNow(): Promise<void>;
  syncStatus(): SyncStatus;
  onSyncStatus(listener: (s: SyncStatus) => void): () => void;
  /** Start the loop (online events, timer); idempotent. */
  start(): void;
  stop(): void;
  /** Stops the loop and closes the database (tests, window unload). */
  close?(): void;
}
