/**
 * SQL the console's data endpoints need beyond the existing services' repos: catalog and
 * collector lists, a schedule's instalments, credentials by id, device names and locations.
 * Every query is scoped to one organisation (its `orgId` parameter).
 */
import type { Sql } from '../db/database.ts';
import { likeLiteral } from '../reports/repo.ts';

const iso = (v: Date | string | null): string | null => (v === null ? null : new Date(v).toISOString());

export async function listCampaignRows(sql: Sql, orgId: number) {
  const rows = await sql.query<{ number: number; name: string | null; friendly_name: string | null }>(
    'SELECT number, name, friendly_name FROM campaigns WHERE org_id = $1 ORDER BY number',
    [orgId],
  );
  return rows.map((r) => ({
    campaignNumber: Number(r.number),
    campaignName: r.name,
    campaignFriendlyName: r.friendly_name,
  }));
}

export async function listReasonRows(sql: Sql, orgId: number) {
  const rows = await sql.query<{
    number: number;
    name: string | null;
    name_hebrew: string | null;
    home_phone: string | null;
    cell_phone: string | null;
    email: string | null;
    campaign_number: number | null;
  }>(
    `SELECT number, name, name_hebrew, home_phone, cell_phone, email, campaign_number
     FROM reasons WHERE org_id = $1 ORDER BY number`,
    [orgId],
  );
  return rows.map((r) => ({
    reasonNumber: Number(r.number),
    reasonName: r.name,
    reasonNameHebrew: r.name_hebrew,
    homePhoneNumber: r.home_phone,
    cellPhoneNum: r.cell_phone,
    email: r.email,
    campaignNum: r.campaign_number === null ? null : Number(r.campaign_number),
  }));
}

/** Ids of the organisation's collectors in account order (at most `limit`). */
export async function listCollectorIds(sql: Sql, orgId: number, limit: number): Promise<number[]> {
  const rows = await sql.query<{ id: string }>(
    'SELECT id FROM collectors WHERE org_id = $1 ORDER BY id LIMIT $2',
    [orgId, limit],
  );
  return rows.map((r) => Number(r.id));
}

export interface InstalmentRow {
  sequence: number;
  dueDate: string;
  nominalDate: string;
  hebrewDate: string;
  amountMinor: number;
  status: string;
  attempts: number;
  lastError: string | null;
  receiptNum: string | null;
}

/** A schedule's instalments in order (empty when the gateway runs the recurrence). */
export async function listInstalments(
  sql: Sql,
  orgId: number,
  scheduleNum: number,
): Promise<InstalmentRow[]> {
  const rows = await sql.query<{
    sequence: number;
    due_date: string;
    nominal_date: string;
    hebrew_date: string;
    amount_minor: string;
    status: string;
    attempts: number;
    last_error: string | null;
    receipt_num: string | null;
  }>(
    `SELECT i.sequence, to_char(i.due_date, 'YYYY-MM-DD') AS due_date,
       to_char(i.nominal_date, 'YYYY-MM-DD') AS nominal_date, i.hebrew_date, i.amount_minor, i.status,
       i.attempts, i.last_error, p.receipt_num
     FROM schedule_instalments i JOIN schedules s ON s.id = i.schedule_id
     LEFT JOIN payments p ON p.id = i.payment_id
     WHERE s.org_id = $1 AND s.schedule_num = $2 ORDER BY i.sequence`,
    [orgId, scheduleNum],
  );
  return rows.map((r) => ({
    sequence: Number(r.sequence),
    dueDate: r.due_date,
    nominalDate: r.nominal_date,
    hebrewDate: r.hebrew_date,
    amountMinor: Number(r.amount_minor),
    status: r.status,
    attempts: Number(r.attempts),
    lastError: r.last_error,
    receiptNum: r.receipt_num,
  }));
}

/** The schedule's payments that failed (declined or errored), newest first. */
export async function listScheduleFailures(sql: Sql, orgId: number, scheduleNum: number) {
  const rows = await sql.query<{
    receipt_num: string;
    status: string;
    amount_minor: string;
    currency: string;
    instalment_seq: number | null;
    error_code: string | null;
    error_message: string | null;
    created_at: Date | string;
  }>(
    `SELECT p.receipt_num, p.status, p.amount_minor, p.currency, p.instalment_seq, p.error_code,
       p.error_message, p.created_at
     FROM payments p JOIN schedules s ON s.id = p.schedule_id
     WHERE s.org_id = $1 AND s.schedule_num = $2 AND p.org_id = $1 AND p.status IN ('Declined', 'Error')
     ORDER BY p.created_at DESC, p.id DESC LIMIT 100`,
    [orgId, scheduleNum],
  );
  return rows.map((r) => ({
    receiptNum: r.receipt_num,
    status: r.status,
    amountMinor: Number(r.amount_minor),
    currency: r.currency,
    instalment: r.instalment_seq,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: iso(r.created_at)!,
  }));
}

export interface CredentialRow {
  id: number;
  masked: string;
  name: string | null;
  sandbox: boolean;
  createdAt: string;
  revokedAt: string | null;
}

export async function listApiKeyRows(sql: Sql, orgId: number): Promise<CredentialRow[]> {
  const rows = await sql.query<{
    id: string;
    masked: string;
    name: string | null;
    sandbox: boolean;
    created_at: Date | string;
    revoked_at: Date | string | null;
  }>('SELECT id, masked, name, sandbox, created_at, revoked_at FROM api_keys WHERE org_id = $1 ORDER BY id', [
    orgId,
  ]);
  return rows.map((r) => ({
    id: Number(r.id),
    masked: r.masked,
    name: r.name,
    sandbox: r.sandbox,
    createdAt: iso(r.created_at)!,
    revokedAt: iso(r.revoked_at),
  }));
}

/** The organisation's sources other than paired terminals' (those are managed as devices). */
export async function listSourceRows(sql: Sql, orgId: number): Promise<(CredentialRow & { kind: string })[]> {
  const rows = await sql.query<{
    id: string;
    masked: string;
    name: string;
    kind: string;
    sandbox: boolean;
    created_at: Date | string;
    revoked_at: Date | string | null;
  }>(
    `SELECT s.id, s.masked, s.name, s.kind, s.sandbox, s.created_at, s.revoked_at FROM sources s
     WHERE s.org_id = $1 AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.source_id = s.id) ORDER BY s.id`,
    [orgId],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    masked: r.masked,
    name: r.name,
    kind: r.kind,
    sandbox: r.sandbox,
    createdAt: iso(r.created_at)!,
    revokedAt: iso(r.revoked_at),
  }));
}

/** The newest API key or source of the organisation with this hash's row id (after inserting it). */
export async function credentialIdByHash(
  sql: Sql,
  table: 'api_keys' | 'sources',
  orgId: number,
  hash: string,
): Promise<number | null> {
  const column = table === 'api_keys' ? 'key_hash' : 'guid_hash';
  const [row] = await sql.query<{ id: string }>(
    `SELECT id FROM ${table} WHERE org_id = $1 AND ${column} = $2`,
    [orgId, hash],
  );
  return row ? Number(row.id) : null;
}

/**
 * Revoke an API key or a (non-device) source by id; null when the organisation has none with that
 * id, else when it was revoked (now or before).
 */
export async function revokeCredentialById(
  sql: Sql,
  table: 'api_keys' | 'sources',
  orgId: number,
  id: number,
): Promise<string | null> {
  const deviceSource =
    table === 'sources' ? 'AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.source_id = t.id)' : '';
  const [row] = await sql.query<{ revoked_at: Date | string }>(
    `UPDATE ${table} t SET revoked_at = COALESCE(revoked_at, now())
     WHERE t.org_id = $1 AND t.id = $2 ${deviceSource} RETURNING revoked_at`,
    [orgId, id],
  );
  return row ? iso(row.revoked_at) : null;
}

/** Name and location of the organisation's devices, by deviceId. */
export async function deviceLocations(sql: Sql, orgId: number): Promise<Map<string, string | null>> {
  const rows = await sql.query<{ device_id: string; location: string | null }>(
    'SELECT device_id, location FROM devices WHERE org_id = $1',
    [orgId],
  );
  return new Map(rows.map((r) => [r.device_id, r.location]));
}

/** Rename or place a device; false when the organisation has no such device. */
export async function updateDeviceDetails(
  sql: Sql,
  orgId: number,
  deviceId: string,
  patch: { name?: string | undefined; location?: string | null | undefined },
): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE devices SET name = COALESCE($3, name),
       location = CASE WHEN $4::boolean THEN $5 ELSE location END
     WHERE org_id = $1 AND device_id = $2 RETURNING id`,
    [orgId, deviceId, patch.name ?? null, patch.location !== undefined, patch.location ?? null],
  );
  return rows.length > 0;
}

export async function renameOrg(sql: Sql, orgId: number, name: string): Promise<void> {
  await sql.query('UPDATE orgs SET name = $2 WHERE id = $1', [orgId, name]);
}

/**
 * Donors a search names, by id after `afterId` (at most `limit`): the account number (exact, any
 * case), part of the name in English or Hebrew in either order (one ILIKE over both names written
 * as "first last first", so "Cohen Moshe" is found too), and the e-mail when the text has an @, the
 * phone digits when it is a phone number. Empty text: every donor. One pass over the
 * organisation's donors at most.
 */
export async function donorIdsForSearch(
  sql: Sql,
  orgId: number,
  text: string,
  limit: number,
  afterId = 0,
): Promise<number[]> {
  const params: unknown[] = [orgId];
  const arg = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const pattern = arg(`%${likeLiteral(text)}%`);
  const or = [
    `upper(d.account_num) = upper(${arg(text)})`,
    `concat_ws(' ', d.first_name, d.last_name, d.first_name, chr(31), d.first_name_hebrew, d.last_name_hebrew,
       d.first_name_hebrew) ILIKE ${pattern}`,
  ];
  if (text.includes('@')) {
    or.push(
      `EXISTS (SELECT 1 FROM jsonb_array_elements(d.emails) em WHERE em->>'emailAddress' ILIKE ${pattern})`,
    );
  }
  const digits = text.replace(/\D/g, '');
  if (digits.length >= 3 && /^[\d\s()+\-.]+$/.test(text)) {
    or.push(`EXISTS (SELECT 1 FROM jsonb_array_elements(d.phones) ph
      WHERE regexp_replace(COALESCE(ph->>'phoneNumber', ''), '\\D', '', 'g') LIKE ${arg(`%${digits}%`)})`);
  }
  const rows = await sql.query<{ id: string }>(
    `SELECT d.id FROM donors d WHERE d.org_id = $1 AND d.id > ${arg(afterId)} AND (${or.join(' OR ')})
     ORDER BY d.id LIMIT ${arg(limit)}`,
    params,
  );
  return rows.map((r) => Number(r.id));
}
