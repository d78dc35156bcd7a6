/**
 * Offline donor search: each donor is stored with a list of search tokens (one multi-entry
 * IndexedDB index), and a query is answered by a prefix range on that index. Tokens are the
 * lowercased words of the names (English and Hebrew), the phone numbers as digits, the e-mail
 * addresses and the account number. The same normalisation is applied to tokens and queries, so
 * "cohen", "Cohen" and "COHEN" meet, and a Hebrew name typed with or without niqqud, or with a
 * final letter in the middle of a word (common while still typing), still matches.
 */
import type { RefPerson } from '@kupah/contracts';

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

/**
 * Phone tokens: the digits as stored, plus the forms people type: the national number for
 * Israeli (+972 → 0…) and North American (+1 → 10 digits) numbers, and the local number without
 * its area code (the last 7 digits).
 */
function phoneTokens(phone: string): string[] {
  const digits = digitsOf(phone);
  if (digits.length < 3) return [];
  const out = [digits];
  if (digits.startsWith('972') && digits.length >= 11) out.push(`0${digits.slice(3)}`);
  if (digits.startsWith('1') && digits.length === 11) out.push(digits.slice(1));
  if (digits.length >= 10) out.push(digits.slice(-7));
  return out;
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
  for (const phone of person.phones) for (const t of phoneTokens(phone)) tokens.add(t);
  for (const email of person.emails) {
    const e = email.trim().toLowerCase();
    if (e !== '') tokens.add(e);
  }
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
