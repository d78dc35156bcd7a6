/** Organisation, credential and settings management behind the admin API (and so the admin CLI). */
import { randomBytes, randomUUID } from 'node:crypto';
import type { Currency } from '@kupah/contracts';
import { CURRENCIES, ERROR_CODES } from '@kupah/contracts';
import { hashCredential, maskCredential, newApiKey, newSourceGuid } from '../auth/credentials.ts';
import { insertApiKey, insertSource, revokeCredential, type SourceKind } from '../auth/repo.ts';
import type { Db, Sql } from '../db/database.ts';
import { GATEWAY_PROVIDERS, type GatewayRegistry, kekOf } from '../gateway/registry.ts';
import {
  countSealedByKek,
  deleteOrgGateway,
  findOrgGateway,
  insertAdminEvent,
  lockSealedGatewayKeys,
  orgGatewayAad,
  updateSealedGatewayKey,
  upsertOrgGateway,
} from '../gateway/repo.ts';
import { ApiError, notFound } from '../http/errors.ts';
import {
  deleteWebhookEndpoint,
  findOrgByGuid,
  insertOrg,
  listWebhookEndpoints,
  type Org,
  updateOrg,
  type WebhookKind,
} from '../orgs/repo.ts';
import type { OrgSettings } from '../orgs/settings.ts';
import { listPendingPayments } from '../payments/repo.ts';
import { countSealedSecretsByKek, prepareRewrap } from '../secrets/at-rest.ts';
import { kekOfDb } from '../secrets/server-kek.ts';
import {
  listAdminEvents,
  listAttempts,
  listDeliveries,
  replayDeliveries,
  rotateSecret,
  saveWebhookEndpoint,
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

/** An organisation's payments being confirmed with the gateway (Pending), oldest first. */
export async function pendingPayments(db: Db, orgGuid: string) {
  const org = await requireOrg(db, orgGuid);
  const payments = await listPendingPayments(db, org.id, 500);
  return { orgGuid: org.guid, count: payments.length, payments };
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
  settings?:
    | (Partial<Omit<OrgSettings, 'terminal' | 'receipts'>> & {
        receipts?: ReceiptsPatch | undefined;
        terminal?: {
          presetsMinor?: number[] | undefined;
          coverFeePercent?: number | undefined;
          providerNames?:
            | Partial<Record<keyof OrgSettings['terminal']['providerNames'], string | null>>
            | undefined;
          brand?: { color?: string | null | undefined; logo?: string | null | undefined } | undefined;
        };
      })
    | undefined;
}

/** Receipt settings: a value sets, null removes, absent keeps. */
export type ReceiptsPatch = {
  [K in keyof OrgSettings['receipts']]?: OrgSettings['receipts'][K] | null | undefined;
};

function mergeReceipts(
  current: OrgSettings['receipts'],
  patch: ReceiptsPatch | undefined,
): OrgSettings['receipts'] {
  const out: Record<string, unknown> = { ...current };
  for (const [key, v] of Object.entries(patch ?? {})) {
    if (v === null) delete out[key];
    else if (v !== undefined) out[key] = v;
  }
  return out as OrgSettings['receipts'];
}

/** A Standard Webhooks secret: `whsec_` + base64 of 24 random bytes. */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

/** The kiosk brand after a change: a value sets, null removes, absent keeps. */
function mergeBrand(
  current: OrgSettings['terminal']['brand'],
  patch: { color?: string | null | undefined; logo?: string | null | undefined } | undefined,
): OrgSettings['terminal']['brand'] {
  const out = { ...current };
  for (const key of ['color', 'logo'] as const) {
    const v = patch?.[key];
    if (v === null) delete out[key];
    else if (v !== undefined) out[key] = v;
  }
  return out;
}

export async function updateSettings(db: Db, orgGuid: string, patch: SettingsPatch) {
  return db.transaction(async (tx) => {
    // Locked: a gateway configured at the same moment cannot slip past the schedule-mode check.
    const org = await findOrgByGuid(tx, orgGuid, { forUpdate: true });
    if (!org) throw notFound(`Organisation ${orgGuid}`);
    if (patch.settings?.scheduleMode === 'Gateway') {
      const gateway = await findOrgGateway(tx, org.id);
      const provider = gateway ? GATEWAY_PROVIDERS[gateway.provider] : undefined;
      if (gateway && provider?.runsRecurrences !== true) {
        const message = `${provider?.label ?? gateway.provider} does not run recurrences for us; use Internal`;
        throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, `scheduleMode Gateway: ${message}`, [
          { field: 'scheduleMode', message },
        ]);
      }
    }
    // The terminal's settings merge with what is set (a new preset list keeps the provider names).
    const terminalPatch = patch.settings?.terminal;
    const providerNames = { ...org.settings.terminal.providerNames };
    for (const [id, name] of Object.entries(terminalPatch?.providerNames ?? {})) {
      if (name === null) delete providerNames[id as keyof typeof providerNames];
      else providerNames[id as keyof typeof providerNames] = name;
    }
    const settings = {
      ...org.settings,
      ...patch.settings,
      receipts: mergeReceipts(org.settings.receipts, patch.settings?.receipts),
      terminal: {
        presetsMinor: terminalPatch?.presetsMinor ?? org.settings.terminal.presetsMinor,
        coverFeePercent: terminalPatch?.coverFeePercent ?? org.settings.terminal.coverFeePercent,
        providerNames,
        brand: mergeBrand(org.settings.terminal.brand, terminalPatch?.brand),
      },
    };
    const updated = await updateOrg(tx, org.id, { currencies: patch.currencies, settings });
    const secrets: Partial<Record<WebhookKind, { url: string; secret: string }>> = {};
    for (const [kind, url] of Object.entries(patch.webhooks ?? {}) as [WebhookKind, string | null][]) {
      if (url === null) await deleteWebhookEndpoint(tx, org.id, kind);
      else {
        // A new URL gets a new secret (sealed at rest), shown once; the same URL keeps its secret.
        const saved = await saveWebhookEndpoint(tx, kekOfDb(db), org.id, kind, url);
        if (saved.secret) secrets[kind] = { url: saved.url, secret: saved.secret };
      }
    }
    return {
      orgGuid: updated.guid,
      name: updated.name,
      currencies: updated.currencies,
      settings: updated.settings,
      webhooks: await listWebhookEndpoints(tx, org.id),
      gateway: await findOrgGateway(tx, org.id),
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
    /** `{ provider, url, keyLast4 }` (never the key), or null: production credentials reach no gateway. */
    gateway: await findOrgGateway(db, org.id),
  };
}

// --- gateways and sealed secrets ---------------------------------------------------------------------

/** `provider: 'none'` removes the organisation's gateway. */
export type GatewayChange = { provider: 'none' } | { provider: string; key: string; url: string | null };

function requireKek(gateways: GatewayRegistry) {
  const kek = kekOf(gateways);
  if (!kek) {
    throw new ApiError(
      503,
      ERROR_CODES.INTERNAL,
      'This server has no key-encryption key (its gateway registry is not per organisation): gateways cannot be configured',
    );
  }
  return kek;
}

/**
 * Configure (or remove) the gateway of an organisation's production credentials. The key is stored
 * sealed and answered only as its last 4 characters; every instance sees the change on its next
 * request (`gateway_rev`).
 */
export async function setOrgGateway(
  db: Db,
  gateways: GatewayRegistry,
  orgGuid: string,
  change: GatewayChange,
  now: Date,
) {
  const kek = requireKek(gateways);
  return db.transaction(async (tx) => {
    const org = await findOrgByGuid(tx, orgGuid, { forUpdate: true });
    if (!org) throw notFound(`Organisation ${orgGuid}`);
    if (change.provider === 'none') {
      const removed = await deleteOrgGateway(tx, org.id);
      if (removed) await insertAdminEvent(tx, org.id, 'gateway_removed', { provider: removed.provider });
      return { orgGuid: org.guid, provider: null, url: null, keyLast4: null, updatedAt: now.toISOString() };
    }
    if (!('key' in change)) throw new Error('a gateway change names a key');
    const provider = Object.hasOwn(GATEWAY_PROVIDERS, change.provider)
      ? GATEWAY_PROVIDERS[change.provider]
      : undefined;
    if (!provider) {
      const names = ['none', ...Object.keys(GATEWAY_PROVIDERS)].join(', ');
      throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, `provider must be one of ${names}`, [
        { field: 'provider', message: `must be one of ${names}` },
      ]);
    }
    if (org.settings.scheduleMode === 'Gateway' && !provider.runsRecurrences) {
      const message =
        `${provider.label} does not run recurrences for us, and this organisation's scheduleMode is ` +
        'Gateway: set it to Internal first (org settings --schedule-mode Internal)';
      throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, message, [{ field: 'provider', message }]);
    }
    const keyLast4 = change.key.slice(-4);
    const stored = await upsertOrgGateway(
      tx,
      org.id,
      {
        provider: change.provider,
        url: change.url,
        keySealed: kek.seal(change.key, orgGatewayAad(org.id)),
        keyLast4,
        kekId: kek.id,
      },
      now,
    );
    await insertAdminEvent(tx, org.id, 'gateway_configured', {
      provider: change.provider,
      url: change.url,
      keyLast4,
      kekId: kek.id,
    });
    return {
      orgGuid: org.guid,
      provider: change.provider,
      url: change.url,
      keyLast4,
      updatedAt: stored.updatedAt.toISOString(),
    };
  });
}

const sumOf = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

async function sealedCounts(sql: Sql, kek: { id: string; previousId: string | null }) {
  const byKek = await countSealedByKek(sql);
  // Envelope and signing private keys and webhook secrets are sealed under the same KEK.
  for (const [id, n] of Object.entries(await countSealedSecretsByKek(sql))) byKek[id] = (byKek[id] ?? 0) + n;
  const n = (id: string | null) => (id === null ? 0 : (byKek[id] ?? 0));
  const total = Object.values(byKek).reduce((a, b) => a + b, 0);
  return {
    sealed: total,
    underCurrent: n(kek.id),
    underPrevious: n(kek.previousId),
    underUnknownKey: total - n(kek.id) - n(kek.previousId),
  };
}

/** Which key-encryption keys the server holds (their ids) and how many values each seals. */
export async function secretsStatus(db: Db, gateways: GatewayRegistry) {
  const kek = requireKek(gateways);
  return { kekId: kek.id, previousKekId: kek.previousId, ...(await sealedCounts(db, kek)) };
}

/**
 * Re-seal every stored secret under the current KEK (after a rotation, with the old key as
 * KUPAH_MASTER_KEY_PREVIOUS). All or nothing: when one value does not open, nothing is changed.
 */
export async function rewrapSecrets(db: Db, gateways: GatewayRegistry) {
  const kek = requireKek(gateways);
  return db.transaction(async (tx) => {
    const rows = await lockSealedGatewayKeys(tx);
    const resealed: { orgId: number; keySealed: string }[] = [];
    const unreadable = new Map<string, number>();
    for (const r of rows) {
      if (r.kekId === kek.id) continue;
      const aad = orgGatewayAad(r.orgId);
      try {
        resealed.push({ orgId: r.orgId, keySealed: kek.seal(kek.open(r.keySealed, aad), aad) });
      } catch {
        unreadable.set(r.kekId, (unreadable.get(r.kekId) ?? 0) + 1);
      }
    }
    const others = await prepareRewrap(tx, kek);
    for (const [id, n] of others.unreadable) unreadable.set(id, (unreadable.get(id) ?? 0) + n);
    const total = rows.length + others.rewrapped + others.alreadyCurrent + sumOf(others.unreadable);
    if (unreadable.size > 0) {
      const n = [...unreadable.values()].reduce((a, b) => a + b, 0);
      const ids = [...unreadable.keys()].join(', ');
      throw new ApiError(
        409,
        ERROR_CODES.INVALID_STATE,
        `${n} of ${total} sealed values do not open (sealed under ${ids}; the current key is ${kek.id}, ` +
          `KUPAH_MASTER_KEY_PREVIOUS is ${kek.previousId ?? 'not set'}): nothing was changed`,
      );
    }
    for (const r of resealed) await updateSealedGatewayKey(tx, r.orgId, r.keySealed, kek.id);
    await others.apply();
    const rewrapped = resealed.length + others.rewrapped;
    if (rewrapped > 0) {
      await insertAdminEvent(tx, null, 'secrets_rewrapped', { kekId: kek.id, rewrapped });
    }
    return {
      kekId: kek.id,
      rewrapped,
      alreadyCurrent: rows.length - resealed.length + others.alreadyCurrent,
      ...(await sealedCounts(tx, kek)),
    };
  });
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
  const previousValidUntil = new Date(now.getTime() + ROTATION_OVERLAP_MS);
  const secret = await rotateSecret(db, kekOfDb(db), org.id, kind, previousValidUntil);
  if (!secret) throw notFound(`The ${kind} webhook endpoint`);
  return { orgGuid: org.guid, kind, secret, previousSecretValidUntil: previousValidUntil.toISOString() };
}

export async function adminEvents(db: Db, orgGuid: string) {
  const org = await requireOrg(db, orgGuid);
  return { orgGuid: org.guid, events: await listAdminEvents(db, org.id) };
}
