import type { RefPerson } from '@kupah/contracts';
import { describe, expect, it } from 'vitest';
import { matchesAllWords, normaliseText, parseDonorQuery, personTokens } from './donor-search.ts';

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

  it('phones match by digits however they are typed, national forms and the local number too', () => {
    const p = person({ phones: ['+972 52-123-4567', '(212) 555-0142'] });
    expect(finds(p, '052-123')).toBe(true);
    expect(finds(p, '972521234567')).toBe(true);
    expect(finds(p, '212 555')).toBe(true);
    expect(finds(p, '5550142')).toBe(true);
    expect(finds(p, '053')).toBe(false);
  });

  it('e-mail and account number match by prefix', () => {
    const p = person({ accountNum: 'D-1042', emails: ['Moshe@Example.org'] });
    expect(finds(p, 'moshe@ex')).toBe(true);
    expect(finds(p, 'd-10')).toBe(true);
    expect(parseDonorQuery('   ')).toBeNull();
  });
});
