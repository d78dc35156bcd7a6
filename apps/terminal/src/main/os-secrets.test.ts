import { describe, expect, it } from 'vitest';
import { createOsSecrets, type SafeStorageApi } from './os-secrets.ts';

/** A stand-in for safeStorage: reversible, but visibly not the plain text. */
function fakeSafeStorage(
  available: boolean,
  backend: ReturnType<SafeStorageApi['getSelectedStorageBackend']>,
) {
  return {
    isAsyncEncryptionAvailable: async () => available,
    getSelectedStorageBackend: () => backend,
    encryptStringAsync: async (plain: string) => Buffer.from(`sealed:${[...plain].reverse().join('')}`),
    decryptStringAsync: async (sealed: Buffer) => {
      const text = sealed.toString();
      if (!text.startsWith('sealed:')) throw new Error('Error while decrypting the ciphertext provided');
      return { result: [...text.slice('sealed:'.length)].reverse().join(''), shouldReEncrypt: false };
    },
  } satisfies SafeStorageApi;
}

describe('OS secrets', () => {
  it('protect to base64 text and reveal it back', async () => {
    const secrets = createOsSecrets(fakeSafeStorage(true, 'gnome_libsecret'), 'linux');
    const sealed = await secrets.protect('0f7c1e2a-credential');
    expect(sealed).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(sealed).not.toContain('credential');
    expect(await secrets.reveal(sealed)).toBe('0f7c1e2a-credential');
    await expect(secrets.reveal(Buffer.from('garbage').toString('base64'))).rejects.toThrow(/decrypting/);
  });

  it('are unavailable without a key store, and on Linux with only the built-in "basic_text" key', async () => {
    expect(await createOsSecrets(fakeSafeStorage(false, 'gnome_libsecret'), 'linux').available()).toBe(false);
    expect(await createOsSecrets(fakeSafeStorage(true, 'basic_text'), 'linux').available()).toBe(false);
    expect(await createOsSecrets(fakeSafeStorage(true, 'kwallet6'), 'linux').available()).toBe(true);
    expect(await createOsSecrets(fakeSafeStorage(true, 'unknown'), 'win32').available()).toBe(true);
  });
});
