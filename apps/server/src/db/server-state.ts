import { randomBytes } from 'node:crypto';
import type { KeyEncryptionKey } from '../secrets/key-encryption.ts';
import type { Db, Sql } from './database.ts';

/**
 * A secret of this installation, made once and kept in the database so that every instance on
 * the same database shares it (e.g. the key of the idempotency request hash).
 */
export async function installationSecret(db: Db, name: string): Promise<string> {
  await db.query(
    `INSERT INTO server_state (key, value) VALUES ($1, to_jsonb($2::text)) ON CONFLICT (key) DO NOTHING`,
    [name, randomBytes(32).toString('hex')],
  );
  const [row] = await db.query<{ value: string }>(
    `SELECT value #>> '{}' AS value FROM server_state WHERE key = $1`,
    [name],
  );
  return row!.value;
}

/** Where a sealed installation key is bound (its row): a sealed value copied elsewhere does not open. */
export const installationKeyAad = (name: string) => `server_state:${name}`;

/**
 * A 32-byte key of this installation, made once and kept sealed under the key-encryption key (so a
 * database dump alone does not yield it), shared by every instance. Unlike a key derived from the
 * KEK it survives a KEK rotation (`secrets rewrap` re-seals it): what it keys (card fingerprints,
 * and through them request hashes) stays the same.
 */
export async function sealedInstallationKey(db: Db, kek: KeyEncryptionKey, name: string): Promise<Buffer> {
  const aad = installationKeyAad(name);
  await db.query(
    `INSERT INTO server_state (key, value) VALUES ($1, to_jsonb($2::text)) ON CONFLICT (key) DO NOTHING`,
    [name, kek.seal(randomBytes(32).toString('base64'), aad)],
  );
  const [row] = await db.query<{ value: string }>(
    `SELECT value #>> '{}' AS value FROM server_state WHERE key = $1`,
    [name],
  );
  return Buffer.from(kek.open(row!.value, aad), 'base64');
}

/** The sealed installation keys, locked for re-sealing (in the caller's transaction). */
export async function lockSealedInstallationKeys(tx: Sql): Promise<{ name: string; sealed: string }[]> {
  return tx.query<{ name: string; sealed: string }>(
    `SELECT key AS name, value #>> '{}' AS sealed FROM server_state
      WHERE jsonb_typeof(value) = 'string' AND value #>> '{}' LIKE 'kek1.%' ORDER BY key FOR UPDATE`,
  );
}

export async function updateSealedInstallationKey(tx: Sql, name: string, sealed: string): Promise<void> {
  await tx.query(`UPDATE server_state SET value = to_jsonb($2::text) WHERE key = $1`, [name, sealed]);
}
