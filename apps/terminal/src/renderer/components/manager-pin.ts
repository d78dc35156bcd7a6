/**
 * The manager PIN: 4–8 digits, kept on the device only as its SHA-256 (hex, WebCrypto) in
 * `LocalSettings.managerPinHash`. Checked here by hashing what was typed and comparing.
 */

export const PIN_PATTERN = /^\d{4,8}$/;

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}

/** `no-pin` when none is set (voids are refused then), else whether `pin` is the manager PIN. */
export async function checkPin(
  pin: string,
  managerPinHash: string | null,
): Promise<'no-pin' | 'ok' | 'wrong'> {
  if (!managerPinHash) return 'no-pin';
  const typed = await sha256Hex(pin);
  // Same length always (64 hex digits): compare every character, not up to the first difference.
  let diff = 0;
  for (let i = 0; i < typed.length; i++) diff |= typed.charCodeAt(i) ^ managerPinHash.charCodeAt(i);
  return diff === 0 && typed.length === managerPinHash.length ? 'ok' : 'wrong';
}
