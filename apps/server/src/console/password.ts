/**
 * Console passwords: scrypt (node:crypto) with a random 16-byte salt per password, the parameters
 * kept in the stored string so they can be raised later (a sign-in with older parameters re-hashes):
 *
 *   scrypt$<N>$<r>$<p>$<salt, base64url>$<64-byte key, base64url>
 *
 * N = 2^15, r = 8, p = 3: one of OWASP's equivalent scrypt settings (32 MiB, about 0.1 s a hash).
 * Compared with timingSafeEqual. Hashing runs on libuv's thread pool (async scrypt), not the event loop.
 */
import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from 'node:crypto';

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const SCRYPT_PARAMS: ScryptParams = { N: 2 ** 15, r: 8, p: 3 };
const KEY_LENGTH = 64;
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
  return new Promise((resolve, reject) =>
    scrypt(password.normalize('NFC'), salt, KEY_LENGTH, options, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

export async function hashPassword(password: string, params: ScryptParams = SCRYPT_PARAMS): Promise<string> {
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
  return !p || p.N !== SCRYPT_PARAMS.N || p.r !== SCRYPT_PARAMS.r || p.p !== SCRYPT_PARAMS.p;
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
