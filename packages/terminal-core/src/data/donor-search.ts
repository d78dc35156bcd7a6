/**
 * Offline donor search: each donor is stored with a list of search tokens (one multi-entry
 * IndexedDB index), and a query is answered by a prefix range on that index. Tokens are the
 * lowercased words of the names (English and Hebrew), the account number and the last digits a
 * masked phone number shows. The same normalisation is applied to tokens and queries, so
 * "cohen", "Cohen" and "COHEN" meet, and a Hebrew name typed with or without niqqud, or with a
 * final letter in the middle of a word (common while still typing), still matches.
 *
 * Devices never hold a donor's phone numbers or e-mail addresses, only masked forms and keyed
 * hashes (`contactHashes`, HMAC-SHA-256 under the organisation's contact key): a whole phone
 * number or e-mail address typed exactly is looked up by its hash ({@link contactQuery}).
 */
import { contactHashInput, type RefPerson } from '@kupah/contracts';

/** Hebrew points and cantillation marks (niqqud, teamim): not part of the letters people type. */
const HEBREW_MARKS = /[\u0591-\u05C7]/g;
/** Latin diacritics after NFD (é → e + U+0301). */
const COMBINING_MARKS = /[\u0300-\u036F]/g;
const FINAL_LETTERS: Readonly<Record<string, string>> = { ך: 'כ', ם: 'מ', ן: 'נ', ף: 'פ', ץ: 'צ' };

/** Lowercase, no diacritics, no niqqud, Hebrew final letters as their ordinary forms. */
export function normaliseText(value: string): string {
  return value
    .normalize('NFD')
    .replace(COMBINING_MARKS, '')
    .replace(HEBREW_MARKS, '')
    .replace(/[ךםןףץ]/g, (c) => FINAL_LETTERS[c] ?? c)
    .toLowerCase();
}

/** The words of a name: split on spaces, hyphens, apostrophes and quotes (Ben-David → ben, david, ben-david). */
function nameWords(value: string | null): string[] {
  if (!value) return [];
  const text = normaliseText(value).trim();
  if (text === '') return [];
  const words = text.split(/[\s\-'’"׳״.,]+/).filter((w) => w !== '');
  const whole = text.split(/\s+/).filter((w) => w !== '');
  return [...words, ...whole];
}

const digitsOf = (value: string): string => value.replace(/\D/g, '');

/** The digits a masked phone number shows (its last four): what a cashier may search by. */
function maskedPhoneTokens(phone: string): string[] {
  const digits = digitsOf(phone);
  return digits.length >= 3 ? [digits.slice(-4)] : [];
}

/** Every search token of a person (deduplicated). */
export function personTokens(person: RefPerson): string[] {
  const tokens = new Set<string>();
  for (const name of [
    person.firstName,
    person.lastName,
    person.firstNameHebrew,
    person.lastNameHebrew,
    person.title,
  ]) {
    for (const w of nameWords(name)) tokens.add(w);
  }
  for (const phone of person.phones) for (const t of maskedPhoneTokens(phone)) tokens.add(t);
  const account = person.accountNum.trim().toLowerCase();
  if (account !== '') tokens.add(account);
  return [...tokens];
}

export interface DonorQuery {
  /** The word looked up in the index (the longest: the fewest candidates). */
  indexWord: string;
  /** Every word must be a prefix of one of a donor's tokens. */
  words: string[];
}

/**
 * A typed query as index words. Digits typed with phone punctuation ("052-123 4567", "(212)
 * 555") are one number; anything else is split into words.
 */
export function parseDonorQuery(query: string): DonorQuery | null {
  const trimmed = query.trim();
  if (trimmed === '') return null;
  if (/^[\d\s()+.-]+$/.test(trimmed)) {
    const digits = digitsOf(trimmed);
    return digits === '' ? null : { indexWord: digits, words: [digits] };
  }
  const words = normaliseText(trimmed)
    .split(/[\s,]+/)
    .filter((w) => w !== '');
  if (words.length === 0) return null;
  const indexWord = words.reduce((a, b) => (b.length > a.length ? b : a));
  return { indexWord, words };
}

/** True when every query word is a prefix of one of the tokens. */
export function matchesAllWords(tokens: readonly string[], words: readonly string[]): boolean {
  return words.every((w) => tokens.some((t) => t.startsWith(w)));
}

/** A query that is a whole phone number or e-mail address: what its keyed hash is made of. */
export interface ContactQuery {
  kind: 'phone' | 'email';
  /** The normalised value as hashed (`phone:0521234567`, `email:d@example.com`). */
  input: string;
}

/**
 * The query as a whole phone number (7 digits or more, with phone punctuation only) or e-mail
 * address (`x@y`), else null. Such a query is answered by its keyed hash only, never by prefix.
 */
export function contactQuery(query: string): ContactQuery | null {
  const trimmed = query.trim();
  if (trimmed.includes('@')) {
    const input = contactHashInput('email', trimmed);
    return input === null ? null : { kind: 'email', input };
  }
  if (!/^[\d\s()+.-]+$/.test(trimmed)) return null;
  const input = contactHashInput('phone', trimmed);
  return input === null ? null : { kind: 'phone', input };
}

const keyCache = new Map<string, Promise<CryptoKey>>();

function hmacKey(contactKey: string): Promise<CryptoKey> {
  let key = keyCache.get(contactKey);
  if (!key) {
    const b64 = contactKey.replace(/-/g, '+').replace(/_/g, '/');
    const raw = Uint8Array.from(atob(b64.padEnd(Math.ceil(b64.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
    key = crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keyCache.clear();
    keyCache.set(contactKey, key);
  }
  return key;
}

/** HMAC-SHA-256 (hex) of a contact query under the organisation's contact key (base64url). */
export async function contactHash(contactKey: string, contact: ContactQuery): Promise<string> {
  const mac = await crypto.subtle.sign(
    'HMAC',
    await hmacKey(contactKey),
    new TextEncoder().encode(contact.input),
  );
  return Array.from(new Uint8Array(mac), (b) => b.toString(16).padStart(2, '0')).join('');
}
