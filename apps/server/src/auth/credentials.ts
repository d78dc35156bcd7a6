import { createHash, randomBytes, randomUUID } from 'node:crypto';

/** SHA-256 of a credential; credentials are stored only as this hash. */
export function hashCredential(value: string): string {
  return createHash('sha256').update(value.trim().toLowerCase()).digest('hex');
}

/** `abcd****wxyz`: enough to tell credentials apart in logs and webhooks, not enough to use one. */
export function maskCredential(value: string): string {
  if (value.length <= 10) return '*'.repeat(value.length);
  return `${value.slice(0, 6)}${'*'.repeat(Math.max(4, value.length - 10))}${value.slice(-4)}`;
}

export function newApiKey(sandbox: boolean): string {
  // Lower-case only: keys are compared case-insensitively (hashed lower-cased).
  return `kpk_${sandbox ? 'test' : 'live'}_${randomBytes(20).toString('hex')}`;
}

export function newSourceGuid(): string {
  return randomUUID();
}
