import type { Sql } from '../db/database.ts';
import { type Org, toOrg } from '../orgs/repo.ts';

export type SourceKind = 'device' | 'external';

/** Who is calling: an API key or a payment source (device or external campaign), with its org. */
export interface Caller {
  type: 'apiKey' | 'source';
  id: number;
  sandbox: boolean;
  masked: string;
  sourceKind: SourceKind | null;
  sourceName: string | null;
  org: Org;
}

const ORG_COLS = 'o.id AS org_id, o.guid, o.name AS org_name, o.currencies, o.settings, o.gateway_rev';

interface CallerRow {
  id: string | number;
  sandbox: boolean;
  masked: string;
  kind?: SourceKind;
  name?: string;
  org_id: string | number;
  guid: string;
  org_name: string;
  currencies: string[];
  settings: unknown;
  gateway_rev: string | number;
}

function toCaller(type: Caller['type'], r: CallerRow): Caller {
  return {
    type,
    id: Number(r.id),
    sandbox: r.sandbox,
    masked: r.masked,
    sourceKind: r.kind ?? null,
    sourceName: r.name ?? null,
    org: toOrg({
      id: r.org_id,
      guid: r.guid,
      name: r.org_name,
      currencies: r.currencies,
      settings: r.settings,
      gateway_rev: r.gateway_rev,
    }),
  };
}

export async function findApiKeyCaller(sql: Sql, keyHash: string): Promise<Caller | null> {
  const [row] = await sql.query<CallerRow>(
    `SELECT k.id, k.sandbox, k.masked, ${ORG_COLS} FROM api_keys k JOIN orgs o ON o.id = k.org_id
     WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
    [keyHash],
  );
  return row ? toCaller('apiKey', row) : null;
}

export async function findSourceCaller(sql: Sql, guidHash: string): Promise<Caller | null> {
  const [row] = await sql.query<CallerRow>(
    `SELECT s.id, s.sandbox, s.masked, s.kind, s.name, ${ORG_COLS} FROM sources s JOIN orgs o ON o.id = s.org_id
     WHERE s.guid_hash = $1 AND s.revoked_at IS NULL`,
    [guidHash],
  );
  return row ? toCaller('source', row) : null;
}

export async function insertApiKey(
  sql: Sql,
  orgId: number,
  keyHash: string,
  masked: string,
  sandbox: boolean,
  name: string | null,
): Promise<number> {
  const [row] = await sql.query<{ id: string }>(
    'INSERT INTO api_keys (org_id, key_hash, masked, sandbox, name) VALUES ($1, $2, $3, $4, $5) RETURNING id',
    [orgId, keyHash, masked, sandbox, name],
  );
  return Number(row!.id);
}

export async function insertSource(
  sql: Sql,
  orgId: number,
  guidHash: string,
  masked: string,
  name: string,
  kind: SourceKind,
  sandbox: boolean,
): Promise<number> {
  const [row] = await sql.query<{ id: string }>(
    'INSERT INTO sources (org_id, guid_hash, masked, name, kind, sandbox) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
    [orgId, guidHash, masked, name, kind, sandbox],
  );
  return Number(row!.id);
}

/** Revoke by the credential's hash within an org; true when something was revoked. */
export async function revokeCredential(
  sql: Sql,
  table: 'api_keys' | 'sources',
  orgId: number,
  hash: string,
): Promise<boolean> {
  const column = table === 'api_keys' ? 'key_hash' : 'guid_hash';
  const rows = await sql.query(
    `UPDATE ${table} SET revoked_at = now() WHERE org_id = $1 AND ${column} = $2 AND revoked_at IS NULL RETURNING id`,
    [orgId, hash],
  );
  return rows.length > 0;
}
