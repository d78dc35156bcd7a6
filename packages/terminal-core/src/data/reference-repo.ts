/**
 * The reference data a terminal keeps for offline use (campaigns, reasons, collectors, donors),
 * and the pull pages that refresh it. A page is applied in one transaction with its cursor, so a
 * crash never leaves a cursor ahead of the data it stands for.
 */
import type { PullResponse, RefCampaign, RefPerson, RefReason } from '@kupah/contracts';
import {
  type ContactQuery,
  contactHash,
  contactQuery,
  matchesAllWords,
  parseDonorQuery,
  personTokens,
} from './donor-search.ts';
import { type DonorRow, readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

/** Upserts a page's records (by number / account number) and moves the cursor. */
export async function applyPullPage(db: TerminalDatabase, page: PullResponse): Promise<void> {
  await db.transaction('rw', [db.campaigns, db.reasons, db.collectors, db.donors, db.kv], async () => {
    if (page.campaigns.length > 0) await db.campaigns.bulkPut(page.campaigns);
    if (page.reasons.length > 0) await db.reasons.bulkPut(page.reasons);
    if (page.collectors.length > 0) await db.collectors.bulkPut(page.collectors);
    if (page.donors.length > 0) {
      await db.donors.bulkPut(page.donors.map((d): DonorRow => ({ ...d, tokens: personTokens(d) })));
    }
    if (page.contactKey) await writeKv(db, 'contactKey', page.contactKey);
    await writeKv(db, 'pullCursor', page.cursor);
    const pairing = await readKv(db, 'pairing');
    if (pairing) {
      await writeKv(db, 'pairing', {
        ...pairing,
        settings: page.settings,
        encryptionKey: page.encryptionKey,
      });
    }
  });
}

export async function clearReferenceData(db: TerminalDatabase): Promise<void> {
  await db.transaction('rw', [db.campaigns, db.reasons, db.collectors, db.donors, db.kv], async () => {
    await Promise.all([db.campaigns.clear(), db.reasons.clear(), db.collectors.clear(), db.donors.clear()]);
    await db.kv.bulkDelete(['pullCursor', 'contactKey']);
  });
}

const withoutTokens = ({ tokens: _tokens, ...person }: DonorRow): RefPerson => person;

/**
 * Donor search. A whole phone number or e-mail address is looked up by its keyed hash only (the
 * device holds no contact details in clear); anything else is a prefix search over names
 * (English, Hebrew), the account number and the last digits of masked phone numbers. A partial
 * e-mail address finds nothing.
 */
export async function searchDonors(db: TerminalDatabase, query: string, limit: number): Promise<RefPerson[]> {
  if (limit <= 0) return [];
  const contact = contactQuery(query);
  if (contact) return findByContact(db, contact, limit);
  if (query.includes('@')) return [];
  const q = parseDonorQuery(query);
  if (!q) return [];
  const rows = await db.donors
    .where('tokens')
    .startsWith(q.indexWord)
    .distinct()
    .filter((d) => matchesAllWords(d.tokens, q.words))
    .limit(limit)
    .toArray();
  return rows.map(withoutTokens);
}

/** Donors with this exact phone number or e-mail address (by keyed hash); none without a key. */
export async function findByContact(
  db: TerminalDatabase,
  contact: ContactQuery,
  limit: number,
): Promise<RefPerson[]> {
  const key = await readKv(db, 'contactKey');
  if (!key) return [];
  const hash = await contactHash(key, contact);
  const rows = await db.donors.where('contactHashes').equals(hash).limit(limit).toArray();
  return rows.map(withoutTokens);
}

const byName = (a: string | null, b: string | null) => (a ?? '').localeCompare(b ?? '');

export async function listCampaigns(db: TerminalDatabase): Promise<RefCampaign[]> {
  const rows = await db.campaigns.toArray();
  return rows.sort((a, b) => byName(a.friendlyName ?? a.name, b.friendlyName ?? b.name));
}

export async function listReasons(db: TerminalDatabase): Promise<RefReason[]> {
  const rows = await db.reasons.toArray();
  return rows.sort((a, b) => byName(a.name, b.name));
}

export async function listCollectors(db: TerminalDatabase): Promise<RefPerson[]> {
  const rows = await db.collectors.toArray();
  return rows.sort((a, b) =>
    byName(`${a.lastName ?? ''} ${a.firstName ?? ''}`, `${b.lastName ?? ''} ${b.firstName ?? ''}`),
  );
}
