/**
 * What the sync loop needs from the durable layer. The loop decides when and what to send; the
 * store (`data/dexie-sync-store.ts`) makes each step durable in one IndexedDB transaction, so a
 * crash between two steps leaves the outbox in a state the next run can continue from.
 */
import type {
  EnvelopeKey,
  OpResult,
  PullResponse,
  ShiftCloseRequest,
  ShiftTotals,
  SyncOperation,
} from '@kupah/contracts';

/** A receipt the donor asked for, of a payment already forwarded, to send on its own. */
export interface ReceiptToSend {
  /** The outbox item. */
  id: string;
  receiptNum: string;
  email: string;
  language: 'en' | 'he';
}

export interface SyncSession {
  serverUrl: string;
  deviceId: string;
  credential: string;
  /** The server refused the device (403 DEVICE_REVOKED): nothing more is sent until it is paired again. */
  revoked: boolean;
  /** The name given to the device on the device (at pairing or in Settings), reported to the server. */
  deviceName?: string | null;
}

/** What the push body reports about the queue (observability and key retirement on the server). */
export interface QueueStats {
  depth: number;
  totalMinor: number;
  byKid: Record<string, number>;
  /** Of `depth`, items being confirmed (not reported to the server; the loop paces its runs by it). */
  confirming?: number;
}

/** An operation taken for a push, with what the loop needs to keep the queue figures current. */
export interface ClaimedOperation {
  operation: SyncOperation;
  amountMinor: number;
  kid: string | null;
}

export interface ClaimRequest {
  deviceId: string;
  maxOperations: number;
  /** The push body stays under the server's limit (1 MiB). */
  maxBytes: number;
  /**
   * Items claimed in this run: in flight in another push, or answered (a retryable answer waits
   * for the next run). Never claimed twice, so no item is in two pushes at once.
   */
  skip: ReadonlySet<string>;
  now: Date;
  /** Items being confirmed are left out until this long after their last attempt (default 30 s). */
  confirmRecheckMs?: number;
}

/** What a run concluded, kept across restarts. */
export interface SyncRunState {
  lastSyncAt: string | null;
  lastError: string | null;
  failures: number;
}

export interface SyncStore {
  session(): Promise<SyncSession | null>;
  /**
   * Queued charges and schedules past their expiry that were never sent become `expired` (never
   * charged). Returns how many. Items sent before (the answer may have been lost) are left for the
   * server to answer: it replays a stored answer or says OFFLINE_EXPIRED.
   */
  expireDue(now: Date): Promise<number>;
  queueStats(deviceId: string): Promise<QueueStats>;
  /**
   * The oldest `queued` items (and `sending` ones a crashed or concurrent run left), marked
   * `sending` with one more attempt, durably, before they go out. Items being confirmed whose
   * last attempt is more recent than `confirmRecheckMs` are left for a later run.
   */
  claimBatch(request: ClaimRequest): Promise<ClaimedOperation[]>;
  /** Applies a push's answers in one transaction (items already final are left as they are). */
  applyResults(results: readonly OpResult[], encryptionKey: EnvelopeKey, now: Date): Promise<void>;
  /** `sending` → `queued` for items whose push got no answer. */
  releaseBatch(opIds: readonly string[]): Promise<void>;
  /** Final errors for operations the server refused as a whole push (a malformed item). */
  failOperations(
    failures: readonly { opId: string; error: { errorCode: string; message: string } }[],
    now: Date,
  ): Promise<void>;
  pullCursor(): Promise<string | null>;
  resetPullCursor(): Promise<void>;
  applyPull(page: PullResponse): Promise<void>;
  markRevoked(message: string, now: Date): Promise<void>;
  loadRunState(): Promise<SyncRunState | null>;
  saveRunState(state: SyncRunState): Promise<void>;
  /** Shift closes the server has not recorded yet, oldest first (optional: stores without shifts). */
  unreportedShiftCloses?(): Promise<ShiftCloseRequest[]>;
  /** The server recorded this close and answered its own totals. */
  markShiftReported?(closeId: string, server: ShiftTotals, now: Date): Promise<void>;
  /** E-mailed receipts to send on their own: payments done whose address the server lacks. */
  receiptsToSend?(deviceId: string): Promise<ReceiptToSend[]>;
  /** The server took the receipt, or refused it for good. */
  markReceipt?(
    id: string,
    email: string,
    outcome: { state: 'sent' } | { state: 'failed'; error: string },
  ): Promise<void>;
}
