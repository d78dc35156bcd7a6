/**
 * The terminal's data layer and sync engine, as one public entry: what the renderer, the
 * end-to-end fault test and the benchmarks may use. Nothing here touches the DOM or React: the
 * machine is reached through the `TerminalBridge` handed to `createTerminalData`, IndexedDB through
 * Dexie (the browser's own, or an injected one in Node), the server through the injected `fetch`.
 * Test fakes (a device server in memory, a paired terminal) are in `@kupah/terminal-core/testing`.
 */
export { isBeingConfirmed } from './data/being-confirmed.ts';
export {
  createTerminalData,
  type TerminalDataInstance,
  type TerminalDataOptions,
} from './data/create-terminal-data.ts';
export { contactQuery } from './data/donor-search.ts';
export { DEFAULT_LOCAL_SETTINGS, LocalSettingsInvalid, mergeLocalSettings } from './data/local-settings.ts';
export {
  checkManagerPin,
  derivePinRecord,
  type LocalSettingsWithPinLock,
  lockedUntil,
  minutesLeft,
  PIN_LOCK_BASE_MS,
  PIN_MAX_TRIES,
  PIN_PATTERN,
  type PinLock,
  type PinStore,
  type PinVerdict,
  sha256Hex,
  verifyPinRecord,
} from './data/manager-pin.ts';
export type { DiscardRecord } from './data/outbox-repo.ts';
export { InsecureServerUrlError, insecureServerUrl } from './data/pairing-service.ts';
export type { ShiftClose, ShiftSummary } from './data/shift.ts';
export {
  type DonationEntry,
  type LocalSettings,
  type OutboxItem,
  OutboxRefusal,
  type OutboxState,
  type Pairing,
  PairingError,
  type QueueSummary,
  type ReceiptRequest,
  type ReenteredInstrument,
  type SyncPhase,
  type SyncStatus,
  type TerminalData,
} from './data/terminal-data.ts';
