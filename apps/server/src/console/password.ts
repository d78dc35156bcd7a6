/**
 * Console passwords: scrypt (node:crypto) with a random 16-byte salt per password, the parameters
 * kept in the stored string so they can be raised later (a sign-in with older parameters re-hashes):
 *
 *   scrypt$<N>$<r>$<p>$<salt, base64url>$<64-byte key, base64url>
 *
 * N = 2^15, r = 8, p = 3: one of OWASP's equivalent scrypt settings (32 MiB, about 0.1 s a hash).
 * Compared with timingSafeEqual. Hashing runs on libuv's thread pool (async scrypt), not the event loop,
 * at most SCRYPT_CONCURRENCY at once (a burst of sign-ins cannot queue unbounded 32 MiB jobs).
 * Tests hash with cheaper parameters (`useScryptParamsForTests`); production cannot.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';
import { ERROR_CODES } from '@kupah/contracts';
import { ApiError } from '../http/errors.ts';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** Production's parameters (and the default): nothing in the environment changes them. */
export const SCRYPT_PARAMS: ScryptParams = Object.freeze({ N: 2 ** 15, r: 8, p: 3 });
const KEY_LENGTH = 64;

/** The parameters new hashes are made with: SCRYPT_PARAMS unless a test chose cheaper ones. */
let current: ScryptParams = SCRYPT_PARAMS;
export const currentScryptParams = (): ScryptParams => current;

/**
 * Tests only (refused outside vitest): hash with cheaper parameters (N = 2^10) so that every
 * sign-in does not cost 0.1-0.5 s. `null` restores production's. The dummy hash is made again.
 */
export function useScryptParamsForTests(params: ScryptParams | null): void {
  if (!process.env.VITEST) throw new Error('scrypt parameters can be changed in tests only');
  current = params ?? SCRYPT_PARAMS;
  dummy = undefined;
}

/** Cheap parameters for tests (testing/console-session.ts installs them). */
export const TEST_SCRYPT_PARAMS: ScryptParams = Object.freeze({ N: 2 ** 10, r: 8, p: 1 });

/**
 * At most this many scrypt derivations run at once (32 MiB each), and at most BUSY_QUEUE wait:
 * past that a request is refused (503, Retry-After) rather than queued without bound.
 */
export const SCRYPT_CONCURRENCY = 4;
const BUSY_QUEUE = 16;
let running = 0;
const waiting: Array<() => void> = [];

/** Too many password checks already running or waiting: 429 RATE_LIMITED, try again in a second. */
const busy = () =>
  new ApiError(429, ERROR_CODES.RATE_LIMITED, 'Too many sign-ins at once: try again in a moment', undefined, {
    'Retry-After': '1',
  });

async function withSlot<T>(work: () => Promise<T>): Promise<T> {
  if (running >= SCRYPT_CONCURRENCY) {
    if (waiting.length >= BUSY_QUEUE) throw busy();
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else running++;
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}
const SALT_LENGTH = 16;

export const PASSWORD_MIN = 10;
export const PASSWORD_MAX = 200;

function derive(password: string, salt: Buffer, params: ScryptParams): Promise<Buffer> {
  const options: ScryptOptions = {
    N: params.N,
    r: params.r,
    p: params.p,
    // 128 * N * r bytes, with room to spare.
    maxmem: 256 * params.N * params.r + 1024 * 1024,
  };
  return withSlot(
    () =>
      new Promise<Buffer>((resolve, reject) =>
        scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) =>
          err ? reject(err) : resolve(key),
        ),
      ),
  );
}

export async function hashPassword(password: string, params: ScryptParams = current): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await derive(password, salt, params);
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

interface Parsed extends ScryptParams {
  salt: Buffer;
  key: Buffer;
}

function parse(stored: string): Parsed | null {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([\w-]+)\$([\w-]+)$/.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Refuse absurd parameters (a corrupted row must not take the server's memory).
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) return null;
  return { N, r, p, salt: Buffer.from(m[4]!, 'base64url'), key: Buffer.from(m[5]!, 'base64url') };
}

/** A hash of a password nobody has: verified against when the account is unknown (same timing). */
let dummy: Promise<string> | undefined;
export function dummyHash(): Promise<string> {
  dummy ??= hashPassword(randomBytes(18).toString('base64url'));
  return dummy;
}

/**
 * Whether `password` is the one `stored` was made from. `stored` null (no account, or an invitation
 * not yet accepted): a dummy hash is verified all the same and the answer is false.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parsed = parse(stored ?? (await dummyHash())) ?? parse(await dummyHash())!;
  const key = await derive(password, parsed.salt, parsed);
  const ok = key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  return ok && stored !== null && parse(stored) !== null;
}

/** The stored hash was made with other parameters than today's: re-hash at the next sign-in. */
export function needsRehash(stored: string): boolean {
  const p = parse(stored);
  return !p || p.N !== current.N || p.r !== current.r || p.p !== current.p;
}

/** Why `password` may not be used, or null: 10 to 200 characters, not the e-mail address. */
export function passwordProblem(password: string, email: string): string | null {
  const length = [...password].length;
  if (length < PASSWORD_MIN) return `must be at least ${PASSWORD_MIN} characters`;
  if (length > PASSWORD_MAX) return `must be at most ${PASSWORD_MAX} characters`;
  const e = email.trim().toLowerCase();
  const pw = password.trim().toLowerCase();
  if (pw === e || pw === e.split('@')[0]) return 'must not be your e-mail address';
  return null;
}
