/**
 * The device credential at rest. The credential is the device's `Authorization` GUID: whoever
 * reads it can push charges as this device, so it is never stored in clear (and never in
 * localStorage, which every script of the origin can read).
 *
 * In Electron the operating system protects it (safeStorage, through the bridge). Elsewhere a
 * non-extractable AES-GCM key is generated with WebCrypto and the CryptoKey object itself is
 * stored in IndexedDB beside the ciphertext: scripts of this origin can use the key while the
 * terminal runs, but nothing can read its bytes out, so a copied database file or a dumped
 * table shows no credential.
 */
import type { TerminalBridge } from '@kupah/contracts';
import type { StoredCredential } from './terminal-database.ts';

const aadOf = (deviceId: string) => new TextEncoder().encode(`kupah/credential/${deviceId}`);

export async function protectCredential(
  credential: string,
  deviceId: string,
  bridge: TerminalBridge,
): Promise<StoredCredential> {
  if (bridge.secrets) return { scheme: 'os', protectedText: await bridge.secrets.protect(credential) };
  const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, [
    'encrypt',
    'decrypt',
  ]);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv, additionalData: aadOf(deviceId) },
    key,
    new TextEncoder().encode(credential),
  );
  return { scheme: 'webcrypto', key, iv, ciphertext };
}

export async function revealCredential(
  stored: StoredCredential,
  deviceId: string,
  bridge: TerminalBridge,
): Promise<string> {
  if (stored.scheme === 'os') {
    if (!bridge.secrets)
      throw new Error('The credential was protected by the operating system, which is not available here');
    return bridge.secrets.reveal(stored.protectedText);
  }
  const plain = await crypto.subtle.decrypt(
    { name: 'AES-GCM', iv: stored.iv, additionalData: aadOf(deviceId) },
    stored.key,
    stored.ciphertext,
  );
  return new TextDecoder().decode(plain);
}
