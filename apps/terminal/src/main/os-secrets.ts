/**
 * Secrets protected by the operating system (Electron safeStorage: DPAPI on Windows, the
 * Keychain on macOS, libsecret/KWallet on Linux), as base64 text the renderer can store.
 *
 * On Linux without a keyring safeStorage falls back to "basic_text", a key built into Chromium:
 * that protects nothing, so it counts as unavailable and the renderer keeps the credential under
 * its own non-extractable WebCrypto key instead.
 */
import type { SafeStorage } from 'electron';

export type SafeStorageApi = Pick<
  SafeStorage,
  'isAsyncEncryptionAvailable' | 'encryptStringAsync' | 'decryptStringAsync' | 'getSelectedStorageBackend'
>;

export interface OsSecrets {
  /** Whether secrets can be protected on this machine; asked once, after the app is ready. */
  available(): Promise<boolean>;
  protect(plain: string): Promise<string>;
  reveal(protectedText: string): Promise<string>;
}

export function createOsSecrets(safeStorage: SafeStorageApi, platform: NodeJS.Platform): OsSecrets {
  return {
    async available() {
      if (!(await safeStorage.isAsyncEncryptionAvailable())) return false;
      return platform !== 'linux' || safeStorage.getSelectedStorageBackend() !== 'basic_text';
    },
    async protect(plain) {
      return (await safeStorage.encryptStringAsync(plain)).toString('base64');
    },
    async reveal(protectedText) {
      return (await safeStorage.decryptStringAsync(Buffer.from(protectedText, 'base64'))).result;
    },
  };
}
