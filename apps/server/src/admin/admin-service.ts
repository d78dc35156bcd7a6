/** Organisation, credential and settings management behind the admin API (and so the admin CLI). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Currency } from '@kupah/contracts';
import { CURRENCIES } from '@kupah/contracts';
import { hashCredential, maskCredential, newApiKey, newSourceGuid } from '../auth/credentials.ts';
import { insertApiKey, insertSource, revokeCredential, type SourceKind } from '../auth/repo.ts';
import type { Db } from '../db/database.ts';
import { notFound } from '../http/errors.ts';
import {
  deleteWebhookEndpoint,
  findOrgByGuid,
  insertOrg,
  listWebhookEndpoints,
  type Org,
  updateOrg,
  upsertWebhookEndpoint,
  type WebhookKind,
} from '../orgs/repo.ts';
import type { OrgSettings } from '../orgs/settings.ts';
import {
  listAdminEvents,
  listAttempts,
  listDeliveries,
  replayDeliveries,
  rotateSecret,
} from '../webhooks/repo.ts';

export interface CreatedOrg {
  orgGuid: string;
  apiKey: string;
  sourceGuid: string;
}

/** A new org with a sandbox API key and a sandbox source of kind `external`. */
export async function createOrg(
  db: Db,
  name: string,
  currencies: Currency[] = [...CURRENCIES],
): Promise<CreatedOrg> {
  return db.transaction(async (tx) => {
    const org = await insertOrg(tx, randomUUID(), name, currencies);
    const apiKey = newApiKey(true);
    await insertApiKey(tx, org.id, hashCredential(apiKey), maskCredential(apiKey), true, 'default');
    const sourceGuid = newSourceGuid();
    await insertSource(
      tx,
      org.id,
      hashCredential(sourceGuid),
      maskCredential(sourceGuid),
      'Sandbox source',
      'external',
      true,
    );
    return { orgGuid: org.guid, apiKey, sourceGuid };
  });
}

export async function requireOrg(db: Db, guid: string): Promise<Org> {
  const org = await findOrgByGuid(db, guid);
  if (!org) throw notFound(`Organisation ${guid}`);
  return org;
}

export async function createApiKey(db: Db, orgGuid: string, sandbox: boolean, name: string | null) {
  const org = await requireOrg(db, orgGuid);
  const apiKey = newApiKey(sandbox);
  await insertApiKey(db, org.id, hashCredential(apiKey), maskCredential(apiKey), sandbox, name);
  return { orgGuid: org.guid, apiKey, sandbox };
}

export async function createSource(
  db: Db,
  orgGuid: string,
  name: string,
  kind: SourceKind,
  sandbox: boolean,
) {
  const org = await requireOrg(db, orgGuid);
  const sourceGuid = newSourceGuid();
  await insertSource(db, org.id, hashCredential(sourceGuid), maskCredential(sourceGuid), name, kind, sandbox);
  return { orgGuid: org.guid, sourceGuid, name, kind, sandbox };
}

export async function revoke(db: Db, orgGuid: string, what: 'apiKey' | 'source', credential: string) {
  const org = await requireOrg(db, orgGuid);
  const revoked = await revokeCredential(
    db,
    what === 'apiKey' ? 'api_keys' : 'sources',
    org.id,
    hashCredential(credential),
  );
  if (!revoked) throw notFound(what === 'apiKey' ? 'That API key' : 'That source');
  return { orgGuid: org.guid, revoked: true };
}

export interface SettingsPatch {
  currencies?: Currency[] | undefined;
  webhooks?: Partial<Record<WebhookKind, string | null>> | undefined;
  settings?: Partial<OrgSettings> | undefined;
}

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

export async function updateSettings(db: Db, orgGuid: string, patch: SettingsPatch) {
  return db.transaction(async (tx) => {
    const org = await findOrgByGuid(tx, orgGuid);
    if (!org) throw notFound(`Organisation ${orgGuid}`);
    const settings = { ...org.settings, ...patch.settings };
    const updated = await updateOrg(tx, org.id, { currencies: patch.currencies, settings });
    const secrets: Partial<Record<WebhookKind, { url: string; secret: string }>> = {};
    for (const [kind, url] of Object.entries(patch.webhooks ?? {}) as [WebhookKind, string | null][]) {
      if (url === null) await deleteWebhookEndpoint(tx, org.id, kind);
      else secrets[kind] = await upsertWebhookEndpoint(tx, org.id, kind, url, newWebhookSecret());
    }
    return {
      orgGuid: updated.guid,
      name: updated.name,
      currencies: updated.currencies,
      settings: updated.settings,
      webhooks: await listWebhookEndpoints(tx, org.id),
      ...(Object.keys(secrets).length > 0 ? { webhookSecrets: secrets } : {}),
    };
  });
}

export async function describeOrg(db: Db, orgGuid: string) {
  const org = await requireOrg(db, orgGuid);
  return {
    orgGuid: org.guid,
    name: org.name,
    currencies: org.currencies,
    settings: org.settings,
    webhooks: await listWebhookEndpoints(db, org.id),
  };
}

// --- webhook operations ----------------------------------------------------------------------------

export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

export async function deliveries(
  db: Db,
  orgGuid: string,
  f: { status?: string | undefined; kind?: string | undefined; since?: string | undefined; limit: number },
) {
  const org = await requireOrg(db, orgGuid);
  return { orgGuid: org.guid, deliveries: await listDeliveries(db, org.id, f) };
}

export async function deliveryAttempts(db: Db, orgGuid: string, deliveryId: number) {
  const org = await requireOrg(db, orgGuid);
  const [delivery] = await listDeliveries(db, org.id, { id: deliveryId, limit: 1 });
  if (!delivery) throw notFound(`Delivery ${deliveryId}`);
  return { orgGuid: org.guid, delivery, attempts: await listAttempts(db, org.id, deliveryId) };
}

export async function replay(
  db: Db,
  orgGuid: string,
  target: { deliveryId: number } | { failedSince: string },
  now: Date,
) {
  const org = await requireOrg(db, orgGuid);
  const replayed = await replayDeliveries(db, org.id, target, now);
  if ('deliveryId' in target && replayed === 0) throw notFound(`Delivery ${target.deliveryId}`);
  return { orgGuid: org.guid, replayed };
}

export async function rotate(db: Db, orgGuid: string, kind: WebhookKind, now: Date) {
  const org = await requireOrg(db, orgGuid);
  const secret = newWebhookSecret();
  const previousValidUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  if (!(await rotateSecret(db, org.id, kind, secret, previousValidUntil))) {
    throw notFound(`The ${kind} webhook endpoint`);
  }
  return { orgGuid: org.guid, kind, secret, previousSecretValidUntil: previousValidUntil.toISOString() };
}

export async function adminEvents(db: Db, orgGuid: string) {
  const org = await requireOrg(db, orgGuid);
  return { orgGuid: org.guid, events: await listAdminEvents(db, org.id) };
}
