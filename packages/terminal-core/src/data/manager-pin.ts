/**
 * The manager PIN: 4–8 digits, kept on the device only as a PBKDF2-SHA-256 record (WebCrypto,
 * random 16-byte salt, {@link PIN_ITERATIONS} iterations) in `LocalSettings.managerPinHash`:
 * `pbkdf2-sha256$<iterations>$<salt>$<hash>` (base64url). A PIN set by an older version is a bare
 * SHA-256 (64 hex digits): it is checked once as such and, when right, replaced by a PBKDF2 record.
 *
 * Tries are limited: after {@link PIN_MAX_TRIES} wrong ones in a row the PIN is refused (right or
 * wrong) for {@link PIN_LOCK_BASE_MS}, doubling with each lockout. The count is kept in the local
 * settings (`pinLock`), so reloading the page does not reset it, and a try is counted before it
 * is checked (a reload during the check does not skip it).
 */
import type { LocalSettings } from '../data/terminal-data.ts';

export const PIN_PATTERN = /^\d{4,8}$/;
export const PIN_ITERATIONS = 200_000;
export const PIN_MAX_TRIES = 5;
export const PIN_LOCK_BASE_MS = 5 * 60_000;
export const PIN_LOCK_MAX_MS = 24 * 3_600_000;

const SALT_BYTES = 16;
const HASH_BITS = 256;
const LEGACY = /^[0-9a-f]{64}$/;
const RECORD = /^pbkdf2-sha256\$(\d{5,7})\$([A-Za-z0-9_-]{22})\$([A-Za-z0-9_-]{43})$/;

/** What `managerPinHash` may hold: a PBKDF2 record, or a legacy SHA-256 (hex). */
export const PIN_RECORD_PATTERN = new RegExp(`${RECORD.source}|${LEGACY.source}`);

/** Wrong tries since the last right one, lockouts so far, and the end of the current lockout. */
export interface PinLock {
  failures: number;
  lockouts: number;
  /** ISO; null when not locked. */
  lockedUntil: string | null;
}

/** Local settings with the PIN's try count (kept in the same stored record). */
export type LocalSettingsWithPinLock = LocalSettings & { pinLock?: PinLock | null };

const NO_LOCK: PinLock = { failures: 0, lockouts: 0, lockedUntil: null };

const toB64url = (bytes: Uint8Array): string =>
  btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

function fromB64url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  return Uint8Array.from(atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
}

async function pbkdf2(pin: string, salt: Uint8Array<ArrayBuffer>, iterations: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey('raw', new TextEncoder().encode(pin), 'PBKDF2', false, [
    'deriveBits',
  ]);
  const bits = await crypto.subtle.deriveBits(
    { name: 'PBKDF2', salt, iterations, hash: 'SHA-256' },
    key,
    HASH_BITS,
  );
  return new Uint8Array(bits);
}

async function sha256(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
}

/** SHA-256 (hex): how versions before PBKDF2 stored the PIN (read for the upgrade, never written). */
export async function sha256Hex(text: string): Promise<string> {
  return Array.from(await sha256(text), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Equal length always: every byte is compared, not up to the first difference. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] ?? 0) ^ (b[i] ?? 0);
  return diff === 0;
}

/** A new PBKDF2 record of `pin` (fresh random salt). */
export async function derivePinRecord(pin: string, iterations = PIN_ITERATIONS): Promise<string> {
  if (!PIN_PATTERN.test(pin)) throw new Error('A manager PIN is 4 to 8 digits');
  const salt = crypto.getRandomValues(new Uint8Array(SALT_BYTES));
  return `pbkdf2-sha256$${iterations}$${toB64url(salt)}$${toB64url(await pbkdf2(pin, salt, iterations))}`;
}

/**
 * Whether `pin` matches `record`. `upgrade`: the PBKDF2 record to store instead (a legacy
 * SHA-256 or a record of fewer iterations than today's), when the PIN is right.
 */
export async function verifyPinRecord(
  pin: string,
  record: string,
): Promise<{ ok: boolean; upgrade: string | null }> {
  const m = RECORD.exec(record);
  if (m) {
    const iterations = Number(m[1]);
    const ok = sameBytes(await pbkdf2(pin, fromB64url(m[2]!), iterations), fromB64url(m[3]!));
    return { ok, upgrade: ok && iterations < PIN_ITERATIONS ? await derivePinRecord(pin) : null };
  }
  if (LEGACY.test(record)) {
    const expected = Uint8Array.from(record.match(/../g)!, (h) => Number.parseInt(h, 16));
    const ok = sameBytes(await sha256(pin), expected);
    return { ok, upgrade: ok ? await derivePinRecord(pin) : null };
  }
  return { ok: false, upgrade: null };
}

export type PinVerdict =
  | { kind: 'ok' }
  /** No PIN is set (what needs one is refused). */
  | { kind: 'no-pin' }
  | { kind: 'wrong'; triesLeft: number }
  /** Refused without checking until `until` (ms since the epoch). */
  | { kind: 'locked'; until: number };

/** Where the PIN and its try count live: the terminal's local settings. */
export interface PinStore {
  getLocalSettings(): Promise<LocalSettings>;
  saveLocalSettings(patch: Partial<LocalSettings>): Promise<LocalSettings>;
}

const lockOf = (local: LocalSettings): PinLock => (local as LocalSettingsWithPinLock).pinLock ?? NO_LOCK;

function savePinState(store: PinStore, pinLock: PinLock, managerPinHash?: string): Promise<LocalSettings> {
  const patch: Partial<LocalSettingsWithPinLock> = { pinLock, ...(managerPinHash ? { managerPinHash } : {}) };
  return store.saveLocalSettings(patch);
}

/**
 * The end of the current lockout (ms), or null when the PIN may be tried now. A lockout ending
 * further away than the longest one (set while the clock was wrong) ends at most that long from
 * now: a clock put right never leaves the terminal locked for good.
 */
export function lockedUntil(local: LocalSettings, now: number): number | null {
  const until = lockOf(local).lockedUntil;
  const at = until ? Date.parse(until) : Number.NaN;
  return Number.isFinite(at) && at > now ? Math.min(at, now + PIN_LOCK_MAX_MS) : null;
}

/**
 * Checks a typed PIN against the stored one, counting the try; locks after
 * {@link PIN_MAX_TRIES} wrong ones. A legacy SHA-256 PIN is replaced by a PBKDF2 record on the
 * first right entry. Returns the stored settings' verdict (and saves what changed).
 */
export async function checkManagerPin(store: PinStore, pin: string, now = Date.now()): Promise<PinVerdict> {
  const local = await store.getLocalSettings();
  if (!local.managerPinHash) return { kind: 'no-pin' };
  const until = lockedUntil(local, now);
  if (until !== null) return { kind: 'locked', until };
  const lock = lockOf(local);
  // Counted before it is checked: a reload or a second window during the check cannot skip it.
  const counted: PinLock = { ...lock, failures: lock.failures + 1, lockedUntil: null };
  await savePinState(store, counted);
  const { ok, upgrade } = await verifyPinRecord(pin, local.managerPinHash);
  if (ok) {
    await savePinState(store, NO_LOCK, upgrade ?? undefined);
    return { kind: 'ok' };
  }
  if (counted.failures < PIN_MAX_TRIES) return { kind: 'wrong', triesLeft: PIN_MAX_TRIES - counted.failures };
  const lockMs = Math.min(PIN_LOCK_BASE_MS * 2 ** lock.lockouts, PIN_LOCK_MAX_MS);
  const end = now + lockMs;
  await savePinState(store, {
    failures: 0,
    lockouts: lock.lockouts + 1,
    lockedUntil: new Date(end).toISOString(),
  });
  return { kind: 'locked', until: end };
}

/** Minutes left of a lockout, rounded up (at least 1). */
export const minutesLeft = (until: number, now = Date.now()): number =>
  Math.max(1, Math.ceil((until - now) / 60_000));
