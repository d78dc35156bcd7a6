/**
 * The device credential at rest. The credential is the device's `Authorization` GUID: whoever
 * reads it can push charges as this device, so it is never stored in clear (and never in
 * localStorage, which every script of the origin can read).
 *
 * In Electron the operating system protects it (safeStorage, through the bridge): a copied
 * profile holds only ciphertext that the OS key store of this user on this machine opens.
 *
 * Elsewhere (the web build, and Electron on Linux without a keyring) a non-extractable AES-GCM
 * key is generated with WebCrypto and the CryptoKey object itself is stored in IndexedDB beside
 * the ciphertext, which is bound to the device id (additional data). Scripts of this origin can
 * use the key while the terminal runs, but nothing can read its bytes out through the API, so a
 * dumped table, an export or a script that reads IndexedDB shows no credential.
 *
 * What this does NOT protect against, by choice (security review, issue 12): the browser writes
 * the key's bytes into the profile's IndexedDB files. Whoever copies the browser profile (the
 * files, not the API) can load it in another browser and reveal the credential. Every other
 * option was worse for a counter terminal:
 * - a key derived from a passphrase or the manager PIN typed at each start: a short PIN is
 *   brute-forced from the copied profile in seconds, and a real passphrase means nothing syncs
 *   after a reload until someone types it (queued donations expire unsent);
 * - a wrapping key held by the server and fetched at start: the proof the device would fetch it
 *   with lives in the same profile, so the copy fetches it too (it would add revocation and
 *   detection, not secrecy), and it needs the server;
 * - the cookie jar (which Chromium encrypts with the OS key store on Windows and macOS): not
 *   encrypted in Firefox, Safari or Chromium on Linux without a keyring, unavailable to Electron's
 *   file:// page, and a cookie cleared or expired on its own would leave the queue unsendable.
 * So the profile is the device's secret: run the web build under its own OS account on an
 * encrypted disk, prefer the desktop app where the OS key store exists, and revoke a device whose
 * profile may have been copied (the server then refuses its credential).
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
