/**
 * What devices get of a person's contact details: masked phone numbers and e-mail addresses (for
 * display), and keyed hashes of the whole values (to find a donor by a phone number or e-mail
 * address typed exactly). Never the values themselves; but a device holds the hashing key, so
 * whoever copies its data can try every phone number offline (pseudonymised, not secret).
 */
import { createHmac, randomBytes } from 'node:crypto';
import { contactHashInput, normaliseEmail, normalisePhone, type RefPerson } from '@kupah/contracts';

const DOT = '•';

/** `••• ••• 0142`: the last four digits only (a number of fewer than 7 digits shows none). */
export function maskPhone(phone: string): string {
  const digits = normalisePhone(phone);
  if (digits === null) return `${DOT.repeat(3)}`;
  return `${DOT.repeat(3)} ${DOT.repeat(3)} ${digits.slice(-4)}`;
}

/** `d•••@example.com`: the first character of the local part and the domain. */
export function maskEmail(email: string): string {
  const normal = normaliseEmail(email);
  if (normal === null) return DOT.repeat(3);
  const at = normal.lastIndexOf('@');
  return `${normal.slice(0, 1)}${DOT.repeat(3)}${normal.slice(at)}`;
}

/** A new organisation contact key (32 random bytes, base64url). */
export const newContactKey = (): string => randomBytes(32).toString('base64url');

/** HMAC-SHA-256 (hex) of a contact's normalised form under the organisation's key. */
export function contactHash(key: string, kind: 'phone' | 'email', value: string): string | null {
  const input = contactHashInput(kind, value);
  if (input === null) return null;
  return createHmac('sha256', Buffer.from(key, 'base64url')).update(input, 'utf8').digest('hex');
}

/** A person as stored (full phones and e-mails) → as devices get it (masked, with hashes). */
export function personForDevice(person: RefPerson, key: string): RefPerson {
  const hashes = new Set<string>();
  for (const p of person.phones) {
    const h = contactHash(key, 'phone', p);
    if (h) hashes.add(h);
  }
  for (const e of person.emails) {
    const h = contactHash(key, 'email', e);
    if (h) hashes.add(h);
  }
  return {
    ...person,
    phones: person.phones.map(maskPhone),
    emails: person.emails.map(maskEmail),
    contactHashes: [...hashes],
  };
}
