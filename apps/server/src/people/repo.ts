import type { Address, Email, Phone } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export type PersonKind = 'donor' | 'collector';

export interface Person {
  id: number;
  accountNum: string;
  title: string | null;
  firstName: string | null;
  lastName: string | null;
  titleHebrew: string | null;
  firstNameHebrew: string | null;
  lastNameHebrew: string | null;
  suffixHebrew: string | null;
  phones: Phone[];
  emails: Email[];
  addresses: Address[];
}

export type PersonFields = Omit<Person, 'id' | 'accountNum'>;

const TABLE = { donor: 'donors', collector: 'collectors' } as const;
const SEQ = { donor: 'donor_seq', collector: 'collector_seq' } as const;
export const ACCOUNT_PREFIX = { donor: 'D', collector: 'C' } as const;

const COLS = `id, account_num, title, first_name, last_name, title_hebrew, first_name_hebrew, last_name_hebrew,
  suffix_hebrew, phones, emails, addresses`;

interface PersonRow {
  id: string | number;
  account_num: string;
  title: string | null;
  first_name: string | null;
  last_name: string | null;
  title_hebrew: string | null;
  first_name_hebrew: string | null;
  last_name_hebrew: string | null;
  suffix_hebrew: string | null;
  phones: Phone[];
  emails: Email[];
  addresses: Address[];
}

function toPerson(r: PersonRow): Person {
  return {
    id: Number(r.id),
    accountNum: r.account_num,
    title: r.title,
    firstName: r.first_name,
    lastName: r.last_name,
    titleHebrew: r.title_hebrew,
    firstNameHebrew: r.first_name_hebrew,
    lastNameHebrew: r.last_name_hebrew,
    suffixHebrew: r.suffix_hebrew,
    phones: r.phones ?? [],
    emails: r.emails ?? [],
    addresses: r.addresses ?? [],
  };
}

export async function findPerson(
  sql: Sql,
  kind: PersonKind,
  orgId: number,
  accountNum: string,
): Promise<Person | null> {
  const [row] = await sql.query<PersonRow>(
    `SELECT ${COLS} FROM ${TABLE[kind]} WHERE org_id = $1 AND upper(account_num) = upper($2)`,
    [orgId, accountNum],
  );
  return row ? toPerson(row) : null;
}

/** Lock the row for an update in this transaction. */
export async function lockPerson(
  sql: Sql,
  kind: PersonKind,
  orgId: number,
  accountNum: string,
): Promise<Person | null> {
  const [row] = await sql.query<PersonRow>(
    `SELECT ${COLS} FROM ${TABLE[kind]} WHERE org_id = $1 AND upper(account_num) = upper($2) FOR UPDATE`,
    [orgId, accountNum],
  );
  return row ? toPerson(row) : null;
}

/**
 * A donor with these names (English or Hebrew pair, case-insensitive) and this phone (digits) or
 * e-mail. Names alone never match: two donors may share a name.
 */
export async function findDonorByContact(
  sql: Sql,
  orgId: number,
  names: { first: string; last: string; hebrew: boolean },
  contact: { phoneDigits: string | null; email: string | null },
): Promise<Person | null> {
  const [first, last] = names.hebrew
    ? ['first_name_hebrew', 'last_name_hebrew']
    : ['first_name', 'last_name'];
  const [row] = await sql.query<PersonRow>(
    `SELECT ${COLS} FROM donors WHERE org_id = $1 AND lower(${first}) = lower($2) AND lower(${last}) = lower($3)
       AND ( ($4::text IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements(phones) p
                WHERE regexp_replace(p->>'phoneNumber', '[^0-9]', '', 'g') = $4))
          OR ($5::text IS NOT NULL AND EXISTS (SELECT 1 FROM jsonb_array_elements(emails) e
                WHERE lower(e->>'emailAddress') = lower($5))) )
     ORDER BY id LIMIT 1`,
    [orgId, names.first, names.last, contact.phoneDigits, contact.email],
  );
  return row ? toPerson(row) : null;
}

/** Insert with a given account number, or the next generated one when `accountNum` is null. */
export async function insertPerson(
  sql: Sql,
  kind: PersonKind,
  orgId: number,
  accountNum: string | null,
  f: PersonFields,
): Promise<Person> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const num = accountNum ?? `${ACCOUNT_PREFIX[kind]}${await nextVal(sql, SEQ[kind])}`;
    const [row] = await sql.query<PersonRow>(
      `INSERT INTO ${TABLE[kind]} (org_id, account_num, title, first_name, last_name, title_hebrew, first_name_hebrew,
         last_name_hebrew, suffix_hebrew, phones, emails, addresses)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb, $11::jsonb, $12::jsonb)
       ON CONFLICT (org_id, account_num) DO NOTHING RETURNING ${COLS}`,
      [
        orgId,
        num,
        f.title,
        f.firstName,
        f.lastName,
        f.titleHebrew,
        f.firstNameHebrew,
        f.lastNameHebrew,
        f.suffixHebrew,
        JSON.stringify(f.phones),
        JSON.stringify(f.emails),
        JSON.stringify(f.addresses),
      ],
    );
    if (row) return toPerson(row);
    if (accountNum !== null) throw new Error(`account ${accountNum} exists`);
    // A generated number was taken by an explicitly numbered record: take the next one.
  }
  throw new Error('could not allocate an account number');
}

export async function updatePerson(sql: Sql, kind: PersonKind, id: number, f: PersonFields): Promise<Person> {
  const [row] = await sql.query<PersonRow>(
    `UPDATE ${TABLE[kind]} SET title = $2, first_name = $3, last_name = $4, title_hebrew = $5, first_name_hebrew = $6,
       last_name_hebrew = $7, suffix_hebrew = $8, phones = $9::jsonb, emails = $10::jsonb, addresses = $11::jsonb,
       updated_at = now()
     WHERE id = $1 RETURNING ${COLS}`,
    [
      id,
      f.title,
      f.firstName,
      f.lastName,
      f.titleHebrew,
      f.firstNameHebrew,
      f.lastNameHebrew,
      f.suffixHebrew,
      JSON.stringify(f.phones),
      JSON.stringify(f.emails),
      JSON.stringify(f.addresses),
    ],
  );
  return toPerson(row!);
}

export async function findPersonById(sql: Sql, kind: PersonKind, id: number): Promise<Person | null> {
  const [row] = await sql.query<PersonRow>(`SELECT ${COLS} FROM ${TABLE[kind]} WHERE id = $1`, [id]);
  return row ? toPerson(row) : null;
}

/** People by id, in the order of `ids`. */
export async function findPeopleByIds(sql: Sql, kind: PersonKind, ids: readonly number[]): Promise<Person[]> {
  if (ids.length === 0) return [];
  const rows = await sql.query<PersonRow>(`SELECT ${COLS} FROM ${TABLE[kind]} WHERE id = ANY($1::bigint[])`, [
    ids,
  ]);
  const byId = new Map(rows.map((r) => [Number(r.id), toPerson(r)]));
  return ids.flatMap((id) => byId.get(id) ?? []);
}

async function nextVal(sql: Sql, seq: string): Promise<number> {
  const [row] = await sql.query<{ n: string }>(`SELECT nextval('${seq}') AS n`);
  return Number(row!.n);
}
