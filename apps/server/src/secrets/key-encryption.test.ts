import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import {
  kekFingerprint,
  keyEncryptionKey,
  loadKeyEncryptionKey,
  MASTER_KEY_FILE,
  parseKeyMaterial,
  sealedKekId,
} from './key-encryption.ts';

const SECRET = 'xKey_sola_0123456789abcdef';
const AAD = 'org_gateways:42';

describe('sealing with the key-encryption key', () => {
  const kek = keyEncryptionKey(randomBytes(32));

  it('round trip: what is sealed opens at the same place, and the sealed text does not contain it', () => {
    const sealed = kek.seal(SECRET, AAD);
    expect(sealed).not.toContain(SECRET);
    expect(sealed).toMatch(/^kek1\.[0-9a-f]{8}\.[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(sealedKekId(sealed)).toBe(kek.id);
    expect(kek.open(sealed, AAD)).toBe(SECRET);
    // A fresh IV each time: the same secret never seals to the same text.
    expect(kek.seal(SECRET, AAD)).not.toBe(sealed);
    expect(kek.open(kek.seal('', AAD), AAD)).toBe('');
    expect(kek.open(kek.seal('שלום ✓', AAD), AAD)).toBe('שלום ✓');
  });

  it('the id is the first 8 hex digits of a fingerprint of the key', () => {
    const key = randomBytes(32);
    expect(keyEncryptionKey(key).id).toBe(kekFingerprint(key));
    expect(kek.id).toMatch(/^[0-9a-f]{8}$/);
    expect(kek.previousId).toBeNull();
  });

  it('a value copied to another place (another AAD) does not open', () => {
    const sealed = kek.seal(SECRET, 'org_gateways:42');
    expect(() => kek.open(sealed, 'org_gateways:43')).toThrow(/does not open for org_gateways:43/);
  });

  it('another key does not open it (and says which key it was sealed under)', () => {
    const sealed = kek.seal(SECRET, AAD);
    const other = keyEncryptionKey(randomBytes(32));
    expect(() => other.open(sealed, AAD)).toThrow(
      new RegExp(`sealed under key ${kek.id}, which is neither the current key \\(${other.id}\\)`),
    );
    // Even when the sealed value is relabelled with the other key's id, GCM refuses it.
    const relabelled = sealed.replace(`.${kek.id}.`, `.${other.id}.`);
    expect(() => other.open(relabelled, AAD)).toThrow(/does not open/);
  });

  it('the previous key still opens what it sealed; new values are sealed under the current one', () => {
    const oldKey = randomBytes(32);
    const old = keyEncryptionKey(oldKey);
    const sealedBefore = old.seal(SECRET, AAD);
    const rotated = keyEncryptionKey(randomBytes(32), oldKey);
    expect(rotated.previousId).toBe(old.id);
    expect(rotated.open(sealedBefore, AAD)).toBe(SECRET);
    const sealedAfter = rotated.seal(SECRET, AAD);
    expect(sealedKekId(sealedAfter)).toBe(rotated.id);
    expect(() => old.open(sealedAfter, AAD)).toThrow(/neither the current key/);
  });

  it('a tampered value is refused: every part, and the format', () => {
    const sealed = kek.seal(SECRET, AAD);
    const parts = sealed.split('.');
    for (const i of [2, 3, 4]) {
      const p = parts[i]!;
      const flipped = (p[0] === 'A' ? 'B' : 'A') + p.slice(1);
      const tampered = [...parts.slice(0, i), flipped, ...parts.slice(i + 1)].join('.');
      expect(() => kek.open(tampered, AAD)).toThrow(/does not open/);
    }
    expect(() => kek.open(`${sealed}x`, AAD)).toThrow(/does not open/);
    expect(() => kek.open(parts.slice(0, 4).join('.'), AAD)).toThrow(/not a sealed value/);
    expect(() => kek.open(sealed.replace(/^kek1/, 'kek2'), AAD)).toThrow(/not a sealed value/);
    expect(() => kek.open(SECRET, AAD)).toThrow(/not a sealed value/);
  });

  it('error messages never carry the secret or the key', () => {
    const key = randomBytes(32);
    const k = keyEncryptionKey(key);
    const sealed = k.seal(SECRET, AAD);
    const messages: string[] = [];
    for (const attempt of [
      () => k.open(sealed, 'elsewhere'),
      () => keyEncryptionKey(randomBytes(32)).open(sealed, AAD),
      () => k.open(sealed.slice(0, -3), AAD),
    ]) {
      try {
        attempt();
      } catch (err) {
        messages.push((err as Error).message);
      }
    }
    expect(messages).toHaveLength(3);
    for (const m of messages) {
      expect(m).not.toContain(SECRET);
      expect(m).not.toContain(key.toString('base64'));
      expect(m).not.toContain(key.toString('hex'));
    }
    expect(JSON.stringify(k)).not.toContain(key.toString('base64'));
    expect(JSON.stringify(k)).toBe(`{"id":"${k.id}","previousId":null}`);
  });
});

describe('parsing a key', () => {
  const key = randomBytes(32);

  it('accepts 32 bytes as base64 (padded or not, url-safe too) or hex', () => {
    for (const text of [
      key.toString('base64'),
      key.toString('base64').replace(/=$/, ''),
      key.toString('base64url'),
      key.toString('hex'),
      key.toString('hex').toUpperCase(),
      `  ${key.toString('base64')}\n`,
    ]) {
      expect(parseKeyMaterial(text)?.equals(key)).toBe(true);
    }
  });

  it('refuses anything else', () => {
    for (const text of [
      '',
      'secret',
      randomBytes(16).toString('base64'),
      randomBytes(33).toString('base64'),
      randomBytes(31).toString('hex'),
      `${key.toString('hex')}00`,
      `${key.toString('base64').slice(0, -2)}!=`,
    ]) {
      expect(parseKeyMaterial(text)).toBeNull();
    }
  });
});

describe('loading the server key-encryption key', () => {
  const dirs: string[] = [];
  const dataDir = () => {
    const d = mkdtempSync(join(tmpdir(), 'kupah-kek-'));
    dirs.push(d);
    return d;
  };
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('without KUPAH_MASTER_KEY: generated once into DATA_DIR/master-key with mode 600, then reused', () => {
    const dir = join(dataDir(), 'nested', 'data');
    const first = loadKeyEncryptionKey({ dataDir: dir });
    const file = join(dir, MASTER_KEY_FILE);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = parseKeyMaterial(readFileSync(file, 'utf8'));
    expect(stored).not.toBeNull();
    expect(first.id).toBe(kekFingerprint(stored!));

    const sealed = first.seal(SECRET, AAD);
    const again = loadKeyEncryptionKey({ dataDir: dir });
    expect(again.id).toBe(first.id);
    expect(again.open(sealed, AAD)).toBe(SECRET);
    expect(readFileSync(file, 'utf8').trim()).toBe(stored!.toString('base64'));
  });

  it('KUPAH_MASTER_KEY wins over the file and writes nothing', () => {
    const dir = dataDir();
    const key = randomBytes(32);
    const kek = loadKeyEncryptionKey({ dataDir: dir, KUPAH_MASTER_KEY: key.toString('hex') });
    expect(kek.id).toBe(kekFingerprint(key));
    expect(() => statSync(join(dir, MASTER_KEY_FILE))).toThrow();
  });

  it('KUPAH_MASTER_KEY_PREVIOUS opens what the key in the file sealed (moving to a new key)', () => {
    const dir = dataDir();
    const fileKek = loadKeyEncryptionKey({ dataDir: dir });
    const sealed = fileKek.seal(SECRET, AAD);
    const fileKey = readFileSync(join(dir, MASTER_KEY_FILE), 'utf8');
    const kek = loadKeyEncryptionKey({
      dataDir: dir,
      KUPAH_MASTER_KEY: randomBytes(32).toString('base64'),
      KUPAH_MASTER_KEY_PREVIOUS: fileKey,
    });
    expect(kek.previousId).toBe(fileKek.id);
    expect(kek.open(sealed, AAD)).toBe(SECRET);
  });

  it('a bad KUPAH_MASTER_KEY (or _PREVIOUS) is a clear error that does not repeat the value', () => {
    const bad = 'my-password-is-not-a-key';
    for (const name of ['KUPAH_MASTER_KEY', 'KUPAH_MASTER_KEY_PREVIOUS'] as const) {
      let message = '';
      try {
        loadKeyEncryptionKey({ dataDir: dataDir(), [name]: bad });
      } catch (err) {
        message = (err as Error).message;
      }
      expect(message).toBe(
        `Bad configuration: ${name}: must be 32 bytes as base64 (44 characters) or hex (64 characters), e.g. from \`openssl rand -base64 32\``,
      );
      // At start, loadConfig refuses it before anything else runs.
      expect(() => loadConfig({ [name]: bad })).toThrow(
        new RegExp(`^Bad configuration: ${name}: must be 32 bytes`),
      );
      expect(() => loadConfig({ [name]: bad })).not.toThrow(new RegExp(bad));
    }
    expect(loadConfig({ KUPAH_MASTER_KEY: '' }).KUPAH_MASTER_KEY).toBeUndefined();
    // An empty DATA_DIR is unset too: the default ./data, never the working directory itself.
    expect(loadConfig({ DATA_DIR: '', INIT_CWD: '/srv/kupah' }).dataDir).toBe('/srv/kupah/data');
    expect(loadConfig({ DATA_DIR: 'var', INIT_CWD: '/srv/kupah' }).dataDir).toBe('/srv/kupah/var');
    const good = randomBytes(32).toString('base64');
    expect(loadConfig({ KUPAH_MASTER_KEY: good }).KUPAH_MASTER_KEY).toBe(good);
  });

  it('a damaged master-key file is a clear error (never silently replaced)', () => {
    const dir = dataDir();
    writeFileSync(join(dir, MASTER_KEY_FILE), 'garbage\n', { mode: 0o600 });
    expect(() => loadKeyEncryptionKey({ dataDir: dir })).toThrow(
      `${join(dir, MASTER_KEY_FILE)} does not hold a key-encryption key`,
    );
    expect(readFileSync(join(dir, MASTER_KEY_FILE), 'utf8')).toBe('garbage\n');
  });
});
