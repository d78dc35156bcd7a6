import { type Currency, isGuid } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import { type OrgSettings, orgSettings } from './settings.ts';

export interface Org {
  id: number;
  guid: string;
  name: string;
  currencies: Currency[];
  settings: OrgSettings;
}

interface OrgRow {
  id: string | number;
  guid: string;
  name: string;
  currencies: string[];
  settings: unknown;
}

export function toOrg(r: OrgRow): Org {
  return {
    id: Number(r.id),
    guid: String(r.guid),
    name: r.name,
    currencies: r.currencies as Currency[],
    settings: orgSettings.parse(r.settings ?? {}),
  };
}

export async function insertOrg(sql: Sql, guid: string, name: string, currencies: Currency[]): Promise<Org> {
  const [row] = await sql.query<OrgRow>(
    'INSERT INTO orgs (guid, name, currencies) VALUES ($1, $2, $3) RETURNING id, guid, name, currencies, settings',
    [guid, name, currencies],
  );
  return toOrg(row!);
}

export async function findOrgByGuid(sql: Sql, guid: string): Promise<Org | null> {
  if (!isGuid(guid)) return null;
  const [row] = await sql.query<OrgRow>(
    'SELECT id, guid, name, currencies, settings FROM orgs WHERE guid = $1',
    [guid],
  );
  return row ? toOrg(row) : null;
}

export async function updateOrg(
  sql: Sql,
  orgId: number,
  patch: { currencies?: Currency[]; settings?: OrgSettings },
): Promise<Org> {
  const [row] = await sql.query<OrgRow>(
    `UPDATE orgs SET currencies = COALESCE($2, currencies), settings = COALESCE($3::jsonb, settings)
     WHERE id = $1 RETURNING id, guid, name, currencies, settings`,
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
