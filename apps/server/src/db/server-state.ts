import { randomBytes } from 'node:crypto';
import type { Db } from './database.ts';

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
