/**
 * The server's key-encryption key (KEK): seals the small secrets kept in the database (an
 * organisation's gateway key) with AES-256-GCM, so a database dump alone never holds them in clear.
 *
 * Where the key comes from: `KUPAH_MASTER_KEY` (32 bytes as base64 or hex), or else the key
 * generated once into `DATA_DIR/master-key` (mode 600) and read back on every later start.
 * `KUPAH_MASTER_KEY_PREVIOUS` is also accepted for opening (never for sealing): set it while
 * rotating, re-seal everything with `npm run admin -- secrets rewrap`, then remove it.
 *
 * A sealed value is `kek1.<kekId>.<iv>.<tag>.<ciphertext>` (base64url parts). The additional
 * authenticated data binds it to its place (e.g. `org_gateways:42`): a value copied to another
 * organisation's row does not open. The key itself is held in a closure, never on an object that
 * could be logged.
 */
import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const VERSION = 'kek1';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const MASTER_KEY_FILE = 'master-key';

export interface KeyEncryptionKey {
  /** Fingerprint of the current key (8 hex digits), stored beside each sealed value. */
  readonly id: string;
  /** Fingerprint of `KUPAH_MASTER_KEY_PREVIOUS`, when it is set. */
  readonly previousId: string | null;
  /** Seal `plain` under the current key, bound to `aad` (where the value will be stored). */
  seal(plain: string, aad: string): string;
  /** Open a value sealed under the current or the previous key; throws when it does not open. */
  open(sealed: string, aad: string): string;
  /**
   * A 32-byte sub-key of the current key for one purpose (`info`), by HKDF-SHA-256: the key
   * itself is never used for anything but sealing.
   */
  deriveKey(info: string): Buffer;
}

/** The HKDF salt of every sub-key derived from a key-encryption key. */
export const KEK_SUBKEY_SALT = 'kupah-kek-subkey';

/** The id of the key a sealed value was sealed under (null when it is not a sealed value). */
export function sealedKekId(sealed: string): string | null {
  const parts = sealed.split('.');
  return parts.length === 5 && parts[0] === VERSION ? parts[1]! : null;
}

/** What a valid key looks like (the message of every refused key; never includes the value). */
export const KEY_FORMAT =
  'must be 32 bytes as base64 (44 characters) or hex (64 characters), e.g. from `openssl rand -base64 32`';

/** The 32 key bytes of a base64 or hex string, or null when it is not one. */
export function parseKeyMaterial(text: string): Buffer | null {
  const s = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(s)) return Buffer.from(s, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(s)) return null;
  const bytes = Buffer.from(s.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
  return bytes.length === KEY_BYTES ? bytes : null;
}

/** The key's fingerprint: the first 8 hex digits of SHA-256 (domain-separated) of the key. */
export function kekFingerprint(key: Buffer): string {
  return createHash('sha256').update('kupah-kek-id:').update(key).digest('hex').slice(0, 8);
}

const b64 = (b: Buffer) => b.toString('base64url');

/** A KEK from raw keys (tests, and `loadKeyEncryptionKey`). */
export function keyEncryptionKey(current: Buffer, previous: Buffer | null = null): KeyEncryptionKey {
  if (current.length !== KEY_BYTES || (previous && previous.length !== KEY_BYTES)) {
    throw new Error(`a key-encryption key is ${KEY_BYTES} bytes`);
  }
  const keys = new Map<string, Buffer>();
  const id = kekFingerprint(current);
  const previousId = previous ? kekFingerprint(previous) : null;
  if (previous && previousId !== id) keys.set(previousId!, Buffer.from(previous));
  keys.set(id, Buffer.from(current));
  const boundTo = (kekId: string, aad: string) => Buffer.from(`${VERSION}.${kekId}.${aad}`, 'utf8');

  return {
    id,
    previousId: previousId === id ? null : previousId,
    deriveKey: (info) => Buffer.from(hkdfSync('sha256', keys.get(id)!, KEK_SUBKEY_SALT, info, 32)),
    seal(plain, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv('aes-256-gcm', keys.get(id)!, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(boundTo(id, aad));
      const ciphertext = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return [VERSION, id, b64(iv), b64(cipher.getAuthTag()), b64(ciphertext)].join('.');
    },
    open(sealed, aad) {
      const parts = sealed.split('.');
      if (parts.length !== 5 || parts[0] !== VERSION) {
        throw new Error(`not a sealed value (expected the ${VERSION} format)`);
      }
      const [, kekId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
      const key = keys.get(kekId);
      if (!key) {
        throw new Error(
          `sealed under key ${kekId}, which is neither the current key (${id}) nor KUPAH_MASTER_KEY_PREVIOUS` +
            (previousId ? ` (${previousId})` : ' (not set)'),
        );
      }
      try {
        const ivBytes = Buffer.from(iv, 'base64url');
        const tagBytes = Buffer.from(tag, 'base64url');
        if (ivBytes.length !== IV_BYTES || tagBytes.length !== TAG_BYTES) throw new Error('bad length');
        const decipher = createDecipheriv('aes-256-gcm', key, ivBytes, { authTagLength: TAG_BYTES });
        decipher.setAAD(boundTo(kekId, aad));
        decipher.setAuthTag(tagBytes);
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new Error(`the sealed value does not open for ${aad} (altered, or stored for another place)`);
      }
    },
  };
}

export interface KekConfig {
  KUPAH_MASTER_KEY?: string | undefined;
  KUPAH_MASTER_KEY_PREVIOUS?: string | undefined;
  dataDir: string;
}

/**
 * The server's KEK: `KUPAH_MASTER_KEY`, or the key in `DATA_DIR/master-key` (generated there with
 * mode 600 on the first start). Throws a one-line error, without the value, for a malformed key.
 */
export function loadKeyEncryptionKey(config: KekConfig): KeyEncryptionKey {
  const fromEnv = (name: 'KUPAH_MASTER_KEY' | 'KUPAH_MASTER_KEY_PREVIOUS'): Buffer | null => {
    const raw = config[name];
    if (raw === undefined || raw.trim() === '') return null;
    const key = parseKeyMaterial(raw);
    if (!key) throw new Error(`Bad configuration: ${name}: ${KEY_FORMAT}`);
    return key;
  };
  const previous = fromEnv('KUPAH_MASTER_KEY_PREVIOUS');
  const current = fromEnv('KUPAH_MASTER_KEY') ?? keyFromFile(config.dataDir);
  return keyEncryptionKey(current, previous);
}

/** The key in DATA_DIR/master-key, created (atomically, mode 600) when there is none. */
function keyFromFile(dataDir: string): Buffer {
  const file = join(dataDir, MASTER_KEY_FILE);
  let text: string | null = null;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
      throw new Error(
        `cannot read the key-encryption key from ${file} (${(err as NodeJS.ErrnoException).code})`,
      );
    }
  }
  if (text === null) {
    mkdirSync(dataDir, { recursive: true });
    // Written whole to a temporary file, then linked into place: several instances starting at
    // once on one DATA_DIR all end up with the one key that won the link.
    const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600 });
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    text = readFileSync(file, 'utf8');
  }
  const key = parseKeyMaterial(text);
  if (!key) throw new Error(`${file} does not hold a key-encryption key: it ${KEY_FORMAT}`);
  return key;
}
