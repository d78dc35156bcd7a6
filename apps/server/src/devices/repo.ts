/** SQL of devices, pairing codes, envelope keys and the incremental reference-data pull. */

import type { JsonWebKey } from 'node:crypto';
import type { RefCampaign, RefPerson, RefReason } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';

export interface DeviceRow {
  id: number;
  deviceId: string;
  orgId: number;
  name: string;
  sandbox: boolean;
  sourceId: number | null;
  pairingExpiresAt: Date | null;
  pairedAt: Date | null;
  revokedAt: Date | null;
  lastSeenAt: Date | null;
  appVersion: string | null;
  queueDepth: number | null;
  queueTotalMinor: number | null;
  queueByKid: Record<string, number> | null;
  lastPushOps: number | null;
  /** The last end of shift recorded for the device (device list only; null elsewhere). */
  lastShiftClosedAt: Date | null;
  createdAt: Date;
}

interface RawDevice {
  id: string | number;
  device_id: string;
  org_id: string | number;
  name: string;
  sandbox: boolean;
  source_id: string | number | null;
  pairing_expires_at: Date | string | null;
  paired_at: Date | string | null;
  revoked_at: Date | string | null;
  last_seen_at: Date | string | null;
  app_version: string | null;
  queue_depth: number | null;
  queue_total_minor: string | number | null;
  queue_by_kid: Record<string, number> | null;
  last_push_ops: number | null;
  last_shift_closed_at?: Date | string | null;
  created_at: Date | string;
}

const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

function toDevice(r: RawDevice): DeviceRow {
  return {
    id: Number(r.id),
    deviceId: r.device_id,
    orgId: Number(r.org_id),
    name: r.name,
    sandbox: r.sandbox,
    sourceId: r.source_id === null ? null : Number(r.source_id),
    pairingExpiresAt: date(r.pairing_expires_at),
    pairedAt: date(r.paired_at),
    revokedAt: date(r.revoked_at),
    lastSeenAt: date(r.last_seen_at),
    appVersion: r.app_version,
    queueDepth: r.queue_depth,
    queueTotalMinor: r.queue_total_minor === null ? null : Number(r.queue_total_minor),
    queueByKid: r.queue_by_kid,
    lastPushOps: r.last_push_ops,
    lastShiftClosedAt: date(r.last_shift_closed_at ?? null),
    createdAt: new Date(r.created_at),
  };
}

const DEVICE_COLS = `d.id, d.device_id, d.org_id, d.name, d.sandbox, d.source_id, d.pairing_expires_at, d.paired_at,
  d.revoked_at, d.last_seen_at, d.app_version, d.queue_depth, d.queue_total_minor, d.queue_by_kid, d.last_push_ops,
  d.created_at`;

export async function insertDevice(
  sql: Sql,
  d: { deviceId: string; orgId: number; name: string; sandbox: boolean; codeHash: string; expiresAt: Date },
): Promise<DeviceRow> {
  const [row] = await sql.query<RawDevice>(
    `INSERT INTO devices AS d (device_id, org_id, name, sandbox, pairing_code_hash, pairing_expires_at)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${DEVICE_COLS}`,
    [d.deviceId, d.orgId, d.name, d.sandbox, d.codeHash, d.expiresAt.toISOString()],
  );
  return toDevice(row!);
}

/** The device waiting to be paired with this code, locked; null when there is none. */
export async function lockDeviceByPairingCode(sql: Sql, codeHash: string): Promise<DeviceRow | null> {
  const [row] = await sql.query<RawDevice>(
    `SELECT ${DEVICE_COLS} FROM devices d WHERE d.pairing_code_hash = $1 FOR UPDATE`,
    [codeHash],
  );
  return row ? toDevice(row) : null;
}

/** Pairing used up: the code is forgotten and the device holds its source. */
export async function markPaired(
  sql: Sql,
  id: number,
  sourceId: number,
  appVersion: string | null,
  name: string,
) {
  await sql.query(
    `UPDATE devices SET pairing_code_hash = NULL, pairing_expires_at = NULL, source_id = $2, paired_at = now(),
       last_seen_at = now(), app_version = $3, name = $4 WHERE id = $1`,
    [id, sourceId, appVersion, name],
  );
}

/**
 * What a device reports on a pull: its name (the device's and its source's, when changed) and its
 * queue after the run's pushes (the by-key counts of the last push are kept).
 */
export async function recordReport(
  sql: Sql,
  id: number,
  report: { name: string | null; queueDepth: number | null; queueTotalMinor: number | null },
): Promise<void> {
  await sql.query(
    `WITH d AS (
       UPDATE devices SET last_seen_at = now(), name = COALESCE($2, name),
         queue_depth = COALESCE($3, queue_depth), queue_total_minor = COALESCE($4, queue_total_minor)
       WHERE id = $1 RETURNING source_id
     )
     UPDATE sources SET name = $2 FROM d WHERE $2::text IS NOT NULL AND sources.id = d.source_id AND sources.name <> $2`,
    [id, report.name, report.queueDepth, report.queueTotalMinor],
  );
}

/** A device by its source credential's hash, revoked or not (so a revoked one gets a clear answer). */
export async function findDeviceBySourceHash(
  sql: Sql,
  guidHash: string,
): Promise<{ device: DeviceRow; sourceRevoked: boolean } | null> {
  const [row] = await sql.query<RawDevice & { source_revoked: boolean }>(
    `SELECT ${DEVICE_COLS}, s.revoked_at IS NOT NULL AS source_revoked
       FROM sources s JOIN devices d ON d.source_id = s.id WHERE s.guid_hash = $1`,
    [guidHash],
  );
  return row ? { device: toDevice(row), sourceRevoked: row.source_revoked } : null;
}

export async function recordSeen(
  sql: Sql,
  id: number,
  seen: {
    appVersion: string | null;
    queueDepth: number;
    queueTotalMinor: number;
    queueByKid: Record<string, number> | null;
    pushOps: number;
  },
): Promise<void> {
  await sql.query(
    `UPDATE devices SET last_seen_at = now(), app_version = COALESCE($2, app_version), queue_depth = $3,
       queue_total_minor = $4, queue_by_kid = $5::jsonb, last_push_ops = $6 WHERE id = $1`,
    [
      id,
      seen.appVersion,
      seen.queueDepth,
      seen.queueTotalMinor,
      seen.queueByKid ? JSON.stringify(seen.queueByKid) : null,
      seen.pushOps,
    ],
  );
}

export async function touchSeen(sql: Sql, id: number): Promise<void> {
  await sql.query('UPDATE devices SET last_seen_at = now() WHERE id = $1', [id]);
}

export async function listDevices(sql: Sql, orgId: number): Promise<DeviceRow[]> {
  const rows = await sql.query<RawDevice>(
    `SELECT ${DEVICE_COLS},
       (SELECT max(s.closed_at) FROM device_shifts s WHERE s.device_id = d.id) AS last_shift_closed_at
     FROM devices d WHERE d.org_id = $1 ORDER BY d.created_at, d.id`,
    [orgId],
  );
  return rows.map(toDevice);
}

/** Revoke a device and its source credential; null when the org has no such device. */
export async function revokeDevice(sql: Sql, orgId: number, deviceId: string): Promise<DeviceRow | null> {
  const [row] = await sql.query<RawDevice>(
    `UPDATE devices d SET revoked_at = COALESCE(revoked_at, now()), pairing_code_hash = NULL
       WHERE d.org_id = $1 AND d.device_id = $2 RETURNING ${DEVICE_COLS}`,
    [orgId, deviceId],
  );
  if (!row) return null;
  if (row.source_id !== null) {
    await sql.query('UPDATE sources SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1', [
      row.source_id,
    ]);
  }
  return toDevice(row);
}

// ---------------------------------------------------------------------------------------------
// Envelope keys

export interface StoredEnvelopeKey {
  kid: string;
  /** The organisation; null for the shared key of earlier versions (never handed out again). */
  orgId: number | null;
  publicJwk: JsonWebKey;
  /** The private key in clear: only rows of earlier versions, until the server seals them. */
  privateJwk: JsonWebKey | null;
  /** The private key sealed under the KEK (`envelopeKeyAad`); null once retired (destroyed). */
  privateSealed: string | null;
  kekId: string | null;
  createdAt: Date;
  retiredAt: Date | null;
}

interface RawKey {
  kid: string;
  org_id: string | number | null;
  public_jwk: JsonWebKey;
  private_jwk: JsonWebKey | null;
  private_sealed: string | null;
  kek_id: string | null;
  created_at: Date | string;
  retired_at: Date | string | null;
}

/** Where an envelope private key is stored: the AAD its sealed value is bound to. */
export const envelopeKeyAad = (orgId: number | null, kid: string): string =>
  `envelope_keys:${orgId ?? 'shared'}:${kid}`;

const toKey = (r: RawKey): StoredEnvelopeKey => ({
  kid: r.kid,
  orgId: r.org_id === null ? null : Number(r.org_id),
  publicJwk: r.public_jwk,
  privateJwk: r.private_jwk,
  privateSealed: r.private_sealed,
  kekId: r.kek_id,
  createdAt: new Date(r.created_at),
  retiredAt: date(r.retired_at),
});

const KEY_COLS = 'kid, org_id, public_jwk, private_jwk, private_sealed, kek_id, created_at, retired_at';

/**
 * Keys, newest first: of one organisation (with the shared keys of earlier versions), or all of
 * them when `orgId` is omitted.
 */
export async function listEnvelopeKeys(sql: Sql, orgId?: number): Promise<StoredEnvelopeKey[]> {
  const rows =
    orgId === undefined
      ? await sql.query<RawKey>(`SELECT ${KEY_COLS} FROM envelope_keys ORDER BY created_at DESC, kid DESC`)
      : await sql.query<RawKey>(
          `SELECT ${KEY_COLS} FROM envelope_keys WHERE org_id = $1 OR org_id IS NULL
           ORDER BY created_at DESC, kid DESC`,
          [orgId],
        );
  return rows.map(toKey);
}

export async function insertEnvelopeKey(
  sql: Sql,
  k: { kid: string; orgId: number; publicJwk: JsonWebKey; privateSealed: string; kekId: string },
): Promise<void> {
  await sql.query(
    `INSERT INTO envelope_keys (kid, org_id, public_jwk, private_sealed, kek_id) VALUES ($1, $2, $3::jsonb, $4, $5)`,
    [k.kid, k.orgId, JSON.stringify(k.publicJwk), k.privateSealed, k.kekId],
  );
}

/** Store a key's private part sealed (and forget any clear copy). */
export async function updateSealedEnvelopeKey(
  sql: Sql,
  kid: string,
  privateSealed: string,
  kekId: string,
): Promise<void> {
  await sql.query(
    'UPDATE envelope_keys SET private_sealed = $2, kek_id = $3, private_jwk = NULL WHERE kid = $1 AND retired_at IS NULL',
    [kid, privateSealed, kekId],
  );
}

/** Retire a key and destroy its private part: nothing sealed under it opens again. */
export async function retireEnvelopeKey(sql: Sql, kid: string): Promise<boolean> {
  const rows = await sql.query(
    `UPDATE envelope_keys SET retired_at = COALESCE(retired_at, now()), private_jwk = NULL, private_sealed = NULL,
       kek_id = NULL WHERE kid = $1 AND (retired_at IS NULL OR private_jwk IS NOT NULL OR private_sealed IS NOT NULL)
     RETURNING kid`,
    [kid],
  );
  return rows.length > 0;
}

/** Live devices (of the key's organisation; all, for a shared key) whose last push reported items under `kid`. */
export async function devicesHoldingKid(sql: Sql, kid: string): Promise<string[]> {
  const rows = await sql.query<{ device_id: string }>(
    `SELECT d.device_id FROM devices d JOIN envelope_keys k ON k.kid = $1
     WHERE d.revoked_at IS NULL AND (k.org_id IS NULL OR d.org_id = k.org_id)
       AND COALESCE((d.queue_by_kid ->> $1)::int, 0) > 0
     ORDER BY d.device_id`,
    [kid],
  );
  return rows.map((r) => r.device_id);
}

/** Serialises key creation across instances (first start, rotation, signing keys). */
export async function lockEnvelopeKeys(sql: Sql): Promise<void> {
  await sql.query('SELECT pg_advisory_xact_lock(727172002)');
}

/** Live keys whose private part is not sealed yet (rows of earlier versions), locked until commit. */
export async function lockClearEnvelopeKeys(sql: Sql): Promise<StoredEnvelopeKey[]> {
  const rows = await sql.query<RawKey>(
    `SELECT ${KEY_COLS} FROM envelope_keys WHERE private_jwk IS NOT NULL AND retired_at IS NULL ORDER BY kid FOR UPDATE`,
  );
  return rows.map(toKey);
}

/** Every sealed envelope private key, locked until commit (re-sealing under a new KEK). */
export async function lockSealedEnvelopeKeys(sql: Sql): Promise<StoredEnvelopeKey[]> {
  const rows = await sql.query<RawKey>(
    `SELECT ${KEY_COLS} FROM envelope_keys WHERE private_sealed IS NOT NULL ORDER BY kid FOR UPDATE`,
  );
  return rows.map(toKey);
}

// Signing keys (one per organisation)

export interface StoredSigningKey {
  orgId: number;
  publicJwk: JsonWebKey;
  privateSealed: string;
  kekId: string;
}

interface RawSigningKey {
  org_id: string | number;
  public_jwk: JsonWebKey;
  private_sealed: string;
  kek_id: string;
}

const toSigningKey = (r: RawSigningKey): StoredSigningKey => ({
  orgId: Number(r.org_id),
  publicJwk: r.public_jwk,
  privateSealed: r.private_sealed,
  kekId: r.kek_id,
});

/** Where an organisation's signing key is stored: the AAD its sealed value is bound to. */
export const signingKeyAad = (orgId: number): string => `signing_keys:${orgId}`;

export async function findSigningKey(sql: Sql, orgId: number): Promise<StoredSigningKey | null> {
  const [row] = await sql.query<RawSigningKey>(
    'SELECT org_id, public_jwk, private_sealed, kek_id FROM signing_keys WHERE org_id = $1',
    [orgId],
  );
  return row ? toSigningKey(row) : null;
}

export async function insertSigningKey(sql: Sql, k: StoredSigningKey): Promise<void> {
  await sql.query(
    `INSERT INTO signing_keys (org_id, public_jwk, private_sealed, kek_id) VALUES ($1, $2::jsonb, $3, $4)
     ON CONFLICT (org_id) DO NOTHING`,
    [k.orgId, JSON.stringify(k.publicJwk), k.privateSealed, k.kekId],
  );
}

/** Every signing key, locked until commit (re-sealing under a new KEK). */
export async function lockSigningKeys(sql: Sql): Promise<StoredSigningKey[]> {
  const rows = await sql.query<RawSigningKey>(
    'SELECT org_id, public_jwk, private_sealed, kek_id FROM signing_keys ORDER BY org_id FOR UPDATE',
  );
  return rows.map(toSigningKey);
}

export async function updateSealedSigningKey(
  sql: Sql,
  orgId: number,
  privateSealed: string,
  kekId: string,
): Promise<void> {
  await sql.query('UPDATE signing_keys SET private_sealed = $2, kek_id = $3 WHERE org_id = $1', [
    orgId,
    privateSealed,
    kekId,
  ]);
}

// ---------------------------------------------------------------------------------------------
// Incremental pull

/** Position in the change stream: (transaction id, table rank, row id). */
export interface PullPosition {
  xid: string;
  rank: number;
  id: number;
}

const RANKS = { campaign: 0, reason: 1, collector: 2, donor: 3 } as const;

export interface PulledRows {
  campaigns: RefCampaign[];
  reasons: RefReason[];
  collectors: RefPerson[];
  donors: RefPerson[];
  last: PullPosition | null;
  /** Every transaction below this id has finished: the next pull may start here. */
  horizon: string;
  more: boolean;
}

interface RawChange {
  rank: number;
  id: string | number;
  xid: string;
  doc: Record<string, unknown>;
}

const personDoc = (t: string) => `jsonb_build_object(
  'accountNum', ${t}.account_num, 'title', ${t}.title, 'firstName', ${t}.first_name, 'lastName', ${t}.last_name,
  'firstNameHebrew', ${t}.first_name_hebrew, 'lastNameHebrew', ${t}.last_name_hebrew,
  'phones', COALESCE((SELECT jsonb_agg(p ->> 'phoneNumber') FROM jsonb_array_elements(${t}.phones) p
                      WHERE COALESCE(p ->> 'phoneNumber', '') <> ''), '[]'::jsonb),
  'emails', COALESCE((SELECT jsonb_agg(e ->> 'emailAddress') FROM jsonb_array_elements(${t}.emails) e
                      WHERE COALESCE(e ->> 'emailAddress', '') <> ''), '[]'::jsonb))`;

/**
 * The organisation's contact key (HMAC key of the contact hashes devices get), made with `fresh`
 * on first use; two instances racing keep the first one written.
 */
export async function contactKeyOf(sql: Sql, orgId: number, fresh: () => string): Promise<string> {
  await sql.query(
    'INSERT INTO org_contact_keys (org_id, key) VALUES ($1, $2) ON CONFLICT (org_id) DO NOTHING',
    [orgId, fresh()],
  );
  const [row] = await sql.query<{ key: string }>('SELECT key FROM org_contact_keys WHERE org_id = $1', [
    orgId,
  ]);
  return row!.key;
}

/**
 * Reference rows changed after `from`, in (xid, table, id) order, limited to `limit`; only rows
 * of transactions below the current snapshot's xmin (all finished), so none is skipped.
 */
export async function pullChanges(
  sql: Sql,
  orgId: number,
  from: PullPosition,
  limit: number,
): Promise<PulledRows> {
  const [h] = await sql.query<{ horizon: string }>(
    'SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS horizon',
  );
  const horizon = h!.horizon;
  const rows = await sql.query<RawChange>(
    `SELECT * FROM (
       SELECT ${RANKS.campaign} AS rank, c.id, c.change_xid::text AS xid, c.change_xid AS x,
         jsonb_build_object('campaignNum', c.number, 'name', c.name, 'friendlyName', c.friendly_name) AS doc
         FROM campaigns c WHERE c.org_id = $1 AND c.change_xid >= $2::xid8 AND c.change_xid < $5::xid8
       UNION ALL
       SELECT ${RANKS.reason}, r.id, r.change_xid::text, r.change_xid,
         jsonb_build_object('reasonNum', r.number, 'name', r.name, 'nameHebrew', r.name_hebrew,
           'campaignNum', r.campaign_number)
         FROM reasons r WHERE r.org_id = $1 AND r.change_xid >= $2::xid8 AND r.change_xid < $5::xid8
       UNION ALL
       SELECT ${RANKS.collector}, k.id, k.change_xid::text, k.change_xid, ${personDoc('k')}
         FROM collectors k WHERE k.org_id = $1 AND k.change_xid >= $2::xid8 AND k.change_xid < $5::xid8
       UNION ALL
       SELECT ${RANKS.donor}, d.id, d.change_xid::text, d.change_xid, ${personDoc('d')}
         FROM donors d WHERE d.org_id = $1 AND d.change_xid >= $2::xid8 AND d.change_xid < $5::xid8
     ) changes
     WHERE (x > $2::xid8) OR (x = $2::xid8 AND (rank > $3 OR (rank = $3 AND id > $4)))
     ORDER BY x, rank, id
     LIMIT $6`,
    [orgId, from.xid, from.rank, from.id, horizon, limit + 1],
  );
  const more = rows.length > limit;
  const page = more ? rows.slice(0, limit) : rows;
  const out: PulledRows = {
    campaigns: [],
    reasons: [],
    collectors: [],
    donors: [],
    last: null,
    horizon,
    more,
  };
  for (const r of page) {
    if (r.rank === RANKS.campaign) out.campaigns.push(r.doc as RefCampaign);
    else if (r.rank === RANKS.reason) out.reasons.push(r.doc as RefReason);
    else if (r.rank === RANKS.collector) out.collectors.push(r.doc as RefPerson);
    else out.donors.push(r.doc as RefPerson);
  }
  const tail = page.at(-1);
  if (tail) out.last = { xid: tail.xid, rank: tail.rank, id: Number(tail.id) };
  return out;
}
