/**
 * The secrets kept in the database besides gateway keys, sealed under the key-encryption key:
 * envelope private keys (`envelope_keys`), the organisations' signing keys (`signing_keys`) and
 * webhook signing secrets (`webhook_endpoints`). This module seals the clear values earlier
 * versions stored (at first use, and by `secrets rewrap`), counts sealed values per KEK for
 * `secrets status`, and re-seals them all under the current KEK for `secrets rewrap`.
 */
import type { Db, Sql } from '../db/database.ts';
import {
  installationKeyAad,
  lockSealedInstallationKeys,
  updateSealedInstallationKey,
} from '../db/server-state.ts';
import {
  envelopeKeyAad,
  lockClearEnvelopeKeys,
  lockSealedEnvelopeKeys,
  lockSigningKeys,
  signingKeyAad,
  updateSealedEnvelopeKey,
  updateSealedSigningKey,
} from '../devices/repo.ts';
import {
  isClearWebhookSecret,
  lockWebhookSecrets,
  openWebhookSecret,
  updateWebhookSecrets,
  webhookSecretAad,
} from '../webhooks/repo.ts';
import { type KeyEncryptionKey, sealedKekId } from './key-encryption.ts';

/**
 * Seal every clear value an earlier version stored: live envelope private keys and webhook
 * secrets. Idempotent; one transaction. Returns how many values were sealed.
 */
export async function sealClearSecrets(db: Db, kek: KeyEncryptionKey): Promise<number> {
  return db.transaction(async (tx) => {
    let n = 0;
    for (const k of await lockClearEnvelopeKeys(tx)) {
      const sealed = kek.seal(JSON.stringify(k.privateJwk), envelopeKeyAad(k.orgId, k.kid));
      await updateSealedEnvelopeKey(tx, k.kid, sealed, kek.id);
      n++;
    }
    for (const w of await lockWebhookSecrets(tx)) {
      const clear = [w.secret, w.previousSecret].filter((s) => s !== null && isClearWebhookSecret(s));
      if (clear.length === 0) continue;
      const seal = (s: string | null) =>
        s !== null && isClearWebhookSecret(s) ? kek.seal(s, webhookSecretAad(w.orgId, w.kind)) : s;
      await updateWebhookSecrets(tx, w.id, seal(w.secret)!, seal(w.previousSecret));
      n += clear.length;
    }
    return n;
  });
}

/** How many of these secrets each KEK seals (by KEK id); clear values are not counted. */
export async function countSealedSecretsByKek(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql.query<{ kek_id: string; n: number }>(
    `SELECT kek_id, count(*)::int AS n FROM (
       SELECT kek_id FROM envelope_keys WHERE private_sealed IS NOT NULL
       UNION ALL SELECT kek_id FROM signing_keys
       UNION ALL SELECT split_part(secret, '.', 2) FROM webhook_endpoints WHERE secret LIKE 'kek1.%'
       UNION ALL SELECT split_part(previous_secret, '.', 2) FROM webhook_endpoints WHERE previous_secret LIKE 'kek1.%'
       UNION ALL SELECT split_part(value #>> '{}', '.', 2) FROM server_state
        WHERE jsonb_typeof(value) = 'string' AND value #>> '{}' LIKE 'kek1.%'
     ) s GROUP BY kek_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.kek_id, Number(r.n)]));
}

export interface RewrapOutcome {
  /** Values sealed again under the current KEK (and clear values of earlier versions sealed). */
  rewrapped: number;
  alreadyCurrent: number;
  /** Values that do not open, by the KEK id they were sealed under: nothing may be written then. */
  unreadable: Map<string, number>;
  /** Writes the new values; call only when `unreadable` is empty (in the same transaction). */
  apply(): Promise<void>;
}

/**
 * Prepare re-sealing every value under the current KEK, in `tx` (rows locked until commit). Nothing
 * is written until `apply()`: the caller checks `unreadable` across all kinds of secrets first.
 */
export async function prepareRewrap(tx: Sql, kek: KeyEncryptionKey): Promise<RewrapOutcome> {
  const writes: (() => Promise<void>)[] = [];
  const unreadable = new Map<string, number>();
  let alreadyCurrent = 0;
  let rewrapped = 0;
  const reseal = (sealed: string, aad: string): string | null => {
    const id = sealedKekId(sealed) ?? 'unknown';
    if (id === kek.id) return sealed;
    try {
      return kek.seal(kek.open(sealed, aad), aad);
    } catch {
      unreadable.set(id, (unreadable.get(id) ?? 0) + 1);
      return null;
    }
  };
  const count = (before: string, after: string | null) => {
    if (after === null) return;
    if (after === before) alreadyCurrent++;
    else rewrapped++;
  };

  for (const k of await lockSealedEnvelopeKeys(tx)) {
    const after = reseal(k.privateSealed!, envelopeKeyAad(k.orgId, k.kid));
    count(k.privateSealed!, after);
    if (after !== null && after !== k.privateSealed) {
      writes.push(() => updateSealedEnvelopeKey(tx, k.kid, after, kek.id));
    }
  }
  for (const k of await lockClearEnvelopeKeys(tx)) {
    const sealed = kek.seal(JSON.stringify(k.privateJwk), envelopeKeyAad(k.orgId, k.kid));
    rewrapped++;
    writes.push(() => updateSealedEnvelopeKey(tx, k.kid, sealed, kek.id));
  }
  for (const k of await lockSigningKeys(tx)) {
    const after = reseal(k.privateSealed, signingKeyAad(k.orgId));
    count(k.privateSealed, after);
    if (after !== null && after !== k.privateSealed) {
      writes.push(() => updateSealedSigningKey(tx, k.orgId, after, kek.id));
    }
  }
  for (const w of await lockWebhookSecrets(tx)) {
    const aad = webhookSecretAad(w.orgId, w.kind);
    const one = (stored: string | null): string | null | undefined => {
      if (stored === null) return null;
      if (isClearWebhookSecret(stored)) {
        rewrapped++;
        return kek.seal(openWebhookSecret(kek, w.orgId, w.kind, stored), aad);
      }
      const after = reseal(stored, aad);
      count(stored, after);
      return after === null ? undefined : after;
    };
    const secret = one(w.secret);
    const previous = one(w.previousSecret);
    if (secret === undefined || previous === undefined) continue;
    if (secret !== w.secret || previous !== w.previousSecret) {
      writes.push(() => updateWebhookSecrets(tx, w.id, secret!, previous));
    }
  }
  for (const k of await lockSealedInstallationKeys(tx)) {
    const after = reseal(k.sealed, installationKeyAad(k.name));
    count(k.sealed, after);
    if (after !== null && after !== k.sealed)
      writes.push(() => updateSealedInstallationKey(tx, k.name, after));
  }
  return {
    rewrapped,
    alreadyCurrent,
    unreadable,
    async apply() {
      for (const w of writes) await w();
    },
  };
}
