import type { Sql } from '../db/database.ts';
import { nextOrgNumber } from '../orgs/repo.ts';

export interface Campaign {
  id: number;
  number: number;
  name: string | null;
  friendlyName: string | null;
}

export interface Reason {
  id: number;
  number: number;
  name: string | null;
  nameHebrew: string | null;
  homePhone: string | null;
  cellPhone: string | null;
  email: string | null;
  campaignNumber: number | null;
}

interface CampaignRow {
  id: string;
  number: number;
  name: string | null;
  friendly_name: string | null;
}
interface ReasonRow {
  id: string;
  number: number;
  name: string | null;
  name_hebrew: string | null;
  home_phone: string | null;
  cell_phone: string | null;
  email: string | null;
  campaign_number: number | null;
}

const toCampaign = (r: CampaignRow): Campaign => ({
  id: Number(r.id),
  number: Number(r.number),
  name: r.name,
  friendlyName: r.friendly_name,
});
const toReason = (r: ReasonRow): Reason => ({
  id: Number(r.id),
  number: Number(r.number),
  name: r.name,
  nameHebrew: r.name_hebrew,
  homePhone: r.home_phone,
  cellPhone: r.cell_phone,
  email: r.email,
  campaignNumber: r.campaign_number === null ? null : Number(r.campaign_number),
});

const CAMPAIGN_COLS = 'id, number, name, friendly_name';
const REASON_COLS = 'id, number, name, name_hebrew, home_phone, cell_phone, email, campaign_number';

export async function findCampaign(sql: Sql, orgId: number, number: number): Promise<Campaign | null> {
  const [row] = await sql.query<CampaignRow>(
    `SELECT ${CAMPAIGN_COLS} FROM campaigns WHERE org_id = $1 AND number = $2`,
    [orgId, number],
  );
  return row ? toCampaign(row) : null;
}

/** A campaign locked for an update in the caller's transaction. */
export async function lockCampaign(sql: Sql, orgId: number, number: number): Promise<Campaign | null> {
  const [row] = await sql.query<CampaignRow>(
    `SELECT ${CAMPAIGN_COLS} FROM campaigns WHERE org_id = $1 AND number = $2 FOR UPDATE`,
    [orgId, number],
  );
  return row ? toCampaign(row) : null;
}

export async function findCampaignByName(sql: Sql, orgId: number, name: string): Promise<Campaign | null> {
  const [row] = await sql.query<CampaignRow>(
    `SELECT ${CAMPAIGN_COLS} FROM campaigns WHERE org_id = $1 AND (lower(name) = lower($2) OR lower(friendly_name) = lower($2))
     ORDER BY number LIMIT 1`,
    [orgId, name],
  );
  return row ? toCampaign(row) : null;
}

export async function insertCampaign(
  sql: Sql,
  orgId: number,
  f: { name: string | null; friendlyName: string | null },
): Promise<Campaign> {
  const number = await nextOrgNumber(sql, orgId, 'campaign');
  const [row] = await sql.query<CampaignRow>(
    `INSERT INTO campaigns (org_id, number, name, friendly_name) VALUES ($1, $2, $3, $4) RETURNING ${CAMPAIGN_COLS}`,
    [orgId, number, f.name, f.friendlyName],
  );
  return toCampaign(row!);
}

export async function updateCampaign(
  sql: Sql,
  orgId: number,
  number: number,
  f: { name: string | null; friendlyName: string | null },
): Promise<Campaign | null> {
  const [row] = await sql.query<CampaignRow>(
    `UPDATE campaigns SET name = $3, friendly_name = $4, updated_at = now() WHERE org_id = $1 AND number = $2
     RETURNING ${CAMPAIGN_COLS}`,
    [orgId, number, f.name, f.friendlyName],
  );
  return row ? toCampaign(row) : null;
}

export async function findReason(sql: Sql, orgId: number, number: number): Promise<Reason | null> {
  const [row] = await sql.query<ReasonRow>(
    `SELECT ${REASON_COLS} FROM reasons WHERE org_id = $1 AND number = $2`,
    [orgId, number],
  );
  return row ? toReason(row) : null;
}

/** A reason locked for an update in the caller's transaction. */
export async function lockReason(sql: Sql, orgId: number, number: number): Promise<Reason | null> {
  const [row] = await sql.query<ReasonRow>(
    `SELECT ${REASON_COLS} FROM reasons WHERE org_id = $1 AND number = $2 FOR UPDATE`,
    [orgId, number],
  );
  return row ? toReason(row) : null;
}

export async function findReasonByName(sql: Sql, orgId: number, name: string): Promise<Reason | null> {
  const [row] = await sql.query<ReasonRow>(
    `SELECT ${REASON_COLS} FROM reasons WHERE org_id = $1 AND (lower(name) = lower($2) OR lower(name_hebrew) = lower($2))
     ORDER BY number LIMIT 1`,
    [orgId, name],
  );
  return row ? toReason(row) : null;
}

export type ReasonFields = Omit<Reason, 'id' | 'number'>;

export async function insertReason(sql: Sql, orgId: number, f: ReasonFields): Promise<Reason> {
  const number = await nextOrgNumber(sql, orgId, 'reason');
  const [row] = await sql.query<ReasonRow>(
    `INSERT INTO reasons (org_id, number, name, name_hebrew, home_phone, cell_phone, email, campaign_number)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${REASON_COLS}`,
    [orgId, number, f.name, f.nameHebrew, f.homePhone, f.cellPhone, f.email, f.campaignNumber],
  );
  return toReason(row!);
}

export async function updateReason(
  sql: Sql,
  orgId: number,
  number: number,
  f: ReasonFields,
): Promise<Reason | null> {
  const [row] = await sql.query<ReasonRow>(
    `UPDATE reasons SET name = $3, name_hebrew = $4, home_phone = $5, cell_phone = $6, email = $7, campaign_number = $8,
       updated_at = now()
     WHERE org_id = $1 AND number = $2 RETURNING ${REASON_COLS}`,
    [orgId, number, f.name, f.nameHebrew, f.homePhone, f.cellPhone, f.email, f.campaignNumber],
  );
  return row ? toReason(row) : null;
}

export async function findCampaignById(sql: Sql, id: number): Promise<Campaign | null> {
  const [row] = await sql.query<CampaignRow>(`SELECT ${CAMPAIGN_COLS} FROM campaigns WHERE id = $1`, [id]);
  return row ? toCampaign(row) : null;
}

export async function findReasonById(sql: Sql, id: number): Promise<Reason | null> {
  const [row] = await sql.query<ReasonRow>(`SELECT ${REASON_COLS} FROM reasons WHERE id = $1`, [id]);
  return row ? toReason(row) : null;
}
