/**
 * `org_gateways`: the gateway an organisation's production credentials charge through. The key is
 * stored sealed under the server's key-encryption key, bound to its row (`orgGatewayAad`); every
 * change bumps `orgs.gateway_rev` in the same transaction.
 */
import type { Sql } from '../db/database.ts';

/** Where an organisation's gateway key is stored: the AAD its sealed value is bound to. */
export const orgGatewayAad = (orgId: number): string => `org_gateways:${orgId}`;

export interface StoredGateway {
  provider: string;
  url: string | null;
  keySealed: string;
  keyLast4: string;
  kekId: string;
  updatedAt: Date;
}

/** What the admin API shows of a configured gateway (never the key). */
export interface GatewayView {
  provider: string;
  url: string | null;
  keyLast4: string;
}

interface GatewayRow {
  provider: string;
  url: string | null;
  key_sealed: string;
  key_last4: string;
  kek_id: string;
  updated_at: Date | string;
}

const toStored = (r: GatewayRow): StoredGateway => ({
  provider: r.provider,
  url: r.url,
  keySealed: r.key_sealed,
  keyLast4: r.key_last4,
  kekId: r.kek_id,
  updatedAt: new Date(r.updated_at),
});

/**
 * The organisation's `gateway_rev` and its gateway (null: none), read in one statement so the two
 * belong together. Null when there is no such organisation.
 */
export async function loadOrgGateway(
  sql: Sql,
  orgId: number,
): Promise<{ rev: number; gateway: StoredGateway | null } | null> {
  const [row] = await sql.query<{ gateway_rev: number | string } & Partial<GatewayRow>>(
    `SELECT o.gateway_rev, g.provider, g.url, g.key_sealed, g.key_last4, g.kek_id, g.updated_at
     FROM orgs o LEFT JOIN org_gateways g ON g.org_id = o.id WHERE o.id = $1`,
    [orgId],
  );
  if (!row) return null;
  return {
    rev: Number(row.gateway_rev),
    gateway: row.provider ? toStored(row as GatewayRow) : null,
  };
}

export async function findOrgGateway(sql: Sql, orgId: number): Promise<GatewayView | null> {
  const [row] = await sql.query<{ provider: string; url: string | null; key_last4: string }>(
    'SELECT provider, url, key_last4 FROM org_gateways WHERE org_id = $1',
    [orgId],
  );
  return row ? { provider: row.provider, url: row.url, keyLast4: row.key_last4 } : null;
}

async function bumpGatewayRev(sql: Sql, orgId: number): Promise<number> {
  const [row] = await sql.query<{ gateway_rev: number | string }>(
    'UPDATE orgs SET gateway_rev = gateway_rev + 1 WHERE id = $1 RETURNING gateway_rev',
    [orgId],
  );
  return Number(row!.gateway_rev);
}

/** Store (or replace) the organisation's gateway and bump its `gateway_rev`. */
export async function upsertOrgGateway(
  sql: Sql,
  orgId: number,
  g: Omit<StoredGateway, 'updatedAt'>,
  now: Date,
): Promise<{ updatedAt: Date; rev: number }> {
  const [row] = await sql.query<{ updated_at: Date | string }>(
    `INSERT INTO org_gateways (org_id, provider, url, key_sealed, key_last4, kek_id, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $7)
     ON CONFLICT (org_id) DO UPDATE SET provider = EXCLUDED.provider, url = EXCLUDED.url,
       key_sealed = EXCLUDED.key_sealed, key_last4 = EXCLUDED.key_last4, kek_id = EXCLUDED.kek_id,
       updated_at = EXCLUDED.updated_at
     RETURNING updated_at`,
    [orgId, g.provider, g.url, g.keySealed, g.keyLast4, g.kekId, now],
  );
  return { updatedAt: new Date(row!.updated_at), rev: await bumpGatewayRev(sql, orgId) };
}

/** Remove the organisation's gateway; the removed provider, or null when there was none. */
export async function deleteOrgGateway(sql: Sql, orgId: number): Promise<{ provider: string } | null> {
  const [row] = await sql.query<{ provider: string }>(
    'DELETE FROM org_gateways WHERE org_id = $1 RETURNING provider',
    [orgId],
  );
  if (!row) return null;
  await bumpGatewayRev(sql, orgId);
  return { provider: row.provider };
}

/** Every sealed gateway key, locked until commit (re-sealing under a new key). */
export async function lockSealedGatewayKeys(
  sql: Sql,
): Promise<{ orgId: number; orgGuid: string; keySealed: string; kekId: string }[]> {
  const rows = await sql.query<{ org_id: string | number; guid: string; key_sealed: string; kek_id: string }>(
    `SELECT g.org_id, o.guid, g.key_sealed, g.kek_id FROM org_gateways g JOIN orgs o ON o.id = g.org_id
     ORDER BY g.org_id FOR UPDATE OF g`,
  );
  return rows.map((r) => ({
    orgId: Number(r.org_id),
    orgGuid: String(r.guid),
    keySealed: r.key_sealed,
    kekId: r.kek_id,
  }));
}

/** Replace a sealed key by the same key sealed under another KEK (the gateway itself is unchanged). */
export async function updateSealedGatewayKey(
  sql: Sql,
  orgId: number,
  keySealed: string,
  kekId: string,
): Promise<void> {
  await sql.query('UPDATE org_gateways SET key_sealed = $2, kek_id = $3 WHERE org_id = $1', [
    orgId,
    keySealed,
    kekId,
  ]);
}

/** How many sealed values each KEK holds. */
export async function countSealedByKek(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql.query<{ kek_id: string; n: number }>(
    'SELECT kek_id, count(*)::int AS n FROM org_gateways GROUP BY kek_id ORDER BY kek_id',
  );
  return Object.fromEntries(rows.map((r) => [r.kek_id, Number(r.n)]));
}

/** An entry of the admin audit trail (`org_id` null: server-wide). Never put a secret in `detail`. */
export async function insertAdminEvent(
  sql: Sql,
  orgId: number | null,
  kind: string,
  detail: Record<string, unknown>,
): Promise<void> {
  await sql.query('INSERT INTO admin_events (org_id, kind, detail) VALUES ($1, $2, $3::jsonb)', [
    orgId,
    kind,
    JSON.stringify(detail),
  ]);
}
