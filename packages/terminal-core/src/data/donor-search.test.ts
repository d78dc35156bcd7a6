import type { RefPerson } from '@kupah/contracts';
import { describe, expect, it } from 'vitest';
import {
  contactQuery,
  matchesAllWords,
  normaliseText,
  parseDonorQuery,
  personTokens,
} from './donor-search.ts';

const person = (over: Partial<RefPerson>): RefPerson => ({
  accountNum: 'D-100',
  title: null,
  firstName: null,
  lastName: null,
  firstNameHebrew: null,
  lastNameHebrew: null,
  phones: [],
  emails: [],
  ...over,
});

const finds = (p: RefPerson, query: string) => {
  const q = parseDonorQuery(query);
  const tokens = personTokens(p);
  return q !== null && tokens.some((t) => t.startsWith(q.indexWord)) && matchesAllWords(tokens, q.words);
};

describe('donor search tokens', () => {
  it('Hebrew names match with or without niqqud and with final letters typed mid-word', () => {
    const p = person({ firstNameHebrew: 'אַבְרָהָם', lastNameHebrew: 'כֹּהֵן' });
    expect(finds(p, 'אברהם')).toBe(true);
    expect(finds(p, 'אבר')).toBe(true);
    expect(finds(p, 'כהן')).toBe(true);
    expect(finds(p, 'כה')).toBe(true);
    expect(finds(p, 'אברהם כהן')).toBe(true);
    expect(finds(p, 'יצחק')).toBe(false);
    expect(normaliseText('שָׁלוֹם')).toBe('שלומ');
  });

  it('English names are case- and accent-blind, split on hyphens, and all words must match', () => {
    const p = person({ firstName: 'José', lastName: 'Ben-David' });
    expect(finds(p, 'jose')).toBe(true);
    expect(finds(p, 'DAV')).toBe(true);
    expect(finds(p, 'ben-d')).toBe(true);
    expect(finds(p, 'jose ben')).toBe(true);
    expect(finds(p, 'jose levi')).toBe(false);
  });

  it('masked phones match by the last digits they show; contact details are no tokens', () => {
    const p = person({ phones: ['••• ••• 4567', '••• ••• 0142'], emails: ['m•••@example.org'] });
    expect(finds(p, '4567')).toBe(true);
    expect(finds(p, '01')).toBe(true);
    expect(finds(p, '053')).toBe(false);
    expect(personTokens(p).some((t) => t.includes('@') || t.includes('•'))).toBe(false);
  });

  it('account number matches by prefix; whole phone numbers and e-mails are contact queries', () => {
    const p = person({ accountNum: 'D-1042' });
    expect(finds(p, 'd-10')).toBe(true);
    expect(parseDonorQuery('   ')).toBeNull();
    expect(contactQuery('052-123 4567')).toEqual({ kind: 'phone', input: 'phone:0521234567' });
    expect(contactQuery('+972 52 123 4567')).toEqual({ kind: 'phone', input: 'phone:0521234567' });
    expect(contactQuery(' Moshe@Example.ORG')).toEqual({ kind: 'email', input: 'email:moshe@example.org' });
    expect(contactQuery('555')).toBeNull();
    expect(contactQuery('D1')).toBeNull();
    expect(contactQuery('moshe@')).toBeNull();
  });
});
