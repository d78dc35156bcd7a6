import { type Currency, isGuid } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import { type OrgSettings, orgSettings } from './settings.ts';

export interface Org {
  id: number;
  guid: string;
  name: string;
  currencies: Currency[];
  settings: OrgSettings;
  /**
   * `orgs.gateway_rev` as read with the org: changes with every change of its gateway, so the
   * gateway registry's cache notices another instance's change. -1 when the row was read without
   * it (never matches a cached gateway: the registry then reads the gateway afresh).
   */
  gatewayRev: number;
}

/** The columns of `orgs` that `toOrg` reads. */
export const ORG_COLUMNS = 'id, guid, name, currencies, settings, gateway_rev';

interface OrgRow {
  id: string | number;
  guid: string;
  name: string;
  currencies: string[];
  settings: unknown;
  gateway_rev?: string | number | null | undefined;
}

export function toOrg(r: OrgRow): Org {
  return {
    id: Number(r.id),
    guid: String(r.guid),
    name: r.name,
    currencies: r.currencies as Currency[],
    settings: orgSettings.parse(r.settings ?? {}),
    gatewayRev: r.gateway_rev === undefined || r.gateway_rev === null ? -1 : Number(r.gateway_rev),
  };
}

export async function insertOrg(sql: Sql, guid: string, name: string, currencies: Currency[]): Promise<Org> {
  const [row] = await sql.query<OrgRow>(
    `INSERT INTO orgs (guid, name, currencies) VALUES ($1, $2, $3) RETURNING ${ORG_COLUMNS}`,
    [guid, name, currencies],
  );
  return toOrg(row!);
}

/** `forUpdate` (inside a transaction): lock the org row until commit. */
export async function findOrgByGuid(
  sql: Sql,
  guid: string,
  opts: { forUpdate?: boolean } = {},
): Promise<Org | null> {
  if (!isGuid(guid)) return null;
  const [row] = await sql.query<OrgRow>(
    `SELECT ${ORG_COLUMNS} FROM orgs WHERE guid = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [guid],
  );
  return row ? toOrg(row) : null;
}

export async function findOrgById(sql: Sql, id: number): Promise<Org | null> {
  const [row] = await sql.query<OrgRow>(`SELECT ${ORG_COLUMNS} FROM orgs WHERE id = $1`, [id]);
  return row ? toOrg(row) : null;
}

export async function updateOrg(
  sql: Sql,
  orgId: number,
  patch: { currencies?: Currency[]; settings?: OrgSettings },
): Promise<Org> {
  const [row] = await sql.query<OrgRow>(
    `UPDATE orgs SET currencies = COALESCE($2, currencies), settings = COALESCE($3::jsonb, settings)
     WHERE id = $1 RETURNING ${ORG_COLUMNS}`,
    [orgId, patch.currencies ?? null, patch.settings ? JSON.stringify(patch.settings) : null],
  );
  return toOrg(row!);
}

export async function countOrgs(sql: Sql): Promise<number> {
  const [row] = await sql.query<{ n: number }>('SELECT count(*)::int AS n FROM orgs');
  return Number(row?.n ?? 0);
}

/** Next per-organisation number for campaigns or reasons (locks the org row until commit). */
export async function nextOrgNumber(
  sql: Sql,
  orgId: number,
  counter: 'campaign' | 'reason',
): Promise<number> {
  const column = counter === 'campaign' ? 'campaign_counter' : 'reason_counter';
  const table = counter === 'campaign' ? 'campaigns' : 'reasons';
  const [row] = await sql.query<{ n: number }>(
    `UPDATE orgs SET ${column} = GREATEST(${column}, (SELECT COALESCE(MAX(number), 0) FROM ${table} WHERE org_id = $1)) + 1
     WHERE id = $1 RETURNING ${column} AS n`,
    [orgId],
  );
  return Number(row!.n);
}

// --- webhook endpoints -------------------------------------------------------------------------

export type WebhookKind = 'payment' | 'schedule' | 'void';

export async function upsertWebhookEndpoint(
  sql: Sql,
  orgId: number,
  kind: WebhookKind,
  url: string,
  newSecret: string,
): Promise<{ url: string; secret: string }> {
  const [row] = await sql.query<{ url: string; secret: string }>(
    `INSERT INTO webhook_endpoints (org_id, kind, url, secret) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, kind) DO UPDATE SET url = EXCLUDED.url, disabled_at = NULL, disabled_reason = NULL,
       failing_since = NULL, updated_at = now()
     RETURNING url, secret`,
    [orgId, kind, url, newSecret],
  );
  return row!;
}

export async function deleteWebhookEndpoint(sql: Sql, orgId: number, kind: WebhookKind): Promise<void> {
  await sql.query('DELETE FROM webhook_endpoints WHERE org_id = $1 AND kind = $2', [orgId, kind]);
}

export async function listWebhookEndpoints(
  sql: Sql,
  orgId: number,
): Promise<{ kind: WebhookKind; url: string; disabled: boolean }[]> {
  const rows = await sql.query<{ kind: WebhookKind; url: string; disabled_at: Date | null }>(
    'SELECT kind, url, disabled_at FROM webhook_endpoints WHERE org_id = $1 ORDER BY kind',
    [orgId],
  );
  return rows.map((r) => ({ kind: r.kind, url: r.url, disabled: r.disabled_at !== null }));
}
