/**
 * The console's data operations: each one reuses the service the External API or the admin API
 * already has (reports, people, catalog, schedules, devices, admin), handed the signed-in user's
 * organisation and never one named by the request. What the console adds (lists, a schedule's
 * instalments, credentials by id, device locations, donor merges) is here and in console-repo.ts.
 */
import type { PaymentListQuery, PersonPatch, SaveCampaignCommand, SaveReasonCommand } from '@kupah/contracts';
import { hebrewDateOf } from '@kupah/schedule';
import {
  createApiKey,
  createSource,
  deliveries,
  deliveryAttempts,
  type GatewayChange,
  replay,
  rotate,
  setOrgGateway,
  updateSettings,
} from '../admin/admin-service.ts';
import { hashCredential } from '../auth/credentials.ts';
import type { Caller } from '../auth/repo.ts';
import { saveCampaign, saveReason } from '../catalog/catalog-service.ts';
import type { Deps } from '../deps.ts';
import { createDevice, listOrgDevices, revokeOrgDevice } from '../devices/device-service.ts';
import { findOrgGateway } from '../gateway/repo.ts';
import { notFound, validationError } from '../http/errors.ts';
import { findOrgById, listWebhookEndpoints, type Org, type WebhookKind } from '../orgs/repo.ts';
import { voidPayment } from '../payments/payment-service.ts';
import { saveCollector, saveDonor, toRecord } from '../people/people-service.ts';
import { findPeopleByIds, findPerson } from '../people/repo.ts';
import { findPaymentRow, type PaymentFilter } from '../reports/repo.ts';
import { getDonor, getPayment, getShifts, listPayments, paymentsCsv } from '../reports/report-service.ts';
import { findScheduleSummary } from '../schedules/repo.ts';
import { changeScheduleState, listSchedules, toScheduleSummary } from '../schedules/schedule-management.ts';
import {
  credentialIdByHash,
  deviceLocations,
  donorIdsForSearch,
  listApiKeyRows,
  listCampaignRows,
  listCollectorIds,
  listInstalments,
  listReasonRows,
  listScheduleFailures,
  listSourceRows,
  renameOrg,
  revokeCredentialById,
  updateDeviceDetails,
} from './console-repo.ts';
import { listDonorMerges, mergedInto } from './donor-merge-repo.ts';
import type { ConsoleUser } from './env.ts';

/** The name a payment's gateway has when it is the sandbox (sandbox payments are voided there). */
const SANDBOX_GATEWAY = 'Sandbox';

/** The signed-in user's organisation, read afresh (its settings and time zone). */
export async function consoleOrg(deps: Deps, user: ConsoleUser): Promise<Org> {
  const org = await findOrgById(deps.db, user.orgId);
  if (!org || org.guid !== user.orgGuid) throw notFound('The organisation');
  return org;
}

/**
 * The services' caller for a console user: the organisation's back office (as an API key is),
 * live unless `sandbox` (a sandbox payment is voided through the sandbox gateway).
 */
export function consoleCaller(org: Org, user: ConsoleUser, sandbox = false): Caller {
  return {
    type: 'apiKey',
    id: 0,
    sandbox,
    masked: `console:${user.email}`,
    sourceKind: null,
    sourceName: null,
    org,
  };
}

export interface Ctx {
  deps: Deps;
  user: ConsoleUser;
  org: Org;
}
const caller = (x: Ctx) => consoleCaller(x.org, x.user);

// --- payments ----------------------------------------------------------------------------------

/** Donors a search may name before it is too broad to narrow by (the read API's search walks then). */
const SEARCH_DONORS = 5000;

/**
 * The console's `q`, resolved before the payments are read so that an index finds them (the read
 * API's `q` filters while walking every payment newest first: a receipt number or a rare name
 * walked a million rows): an exact receipt number of the organisation is that payment; otherwise
 * the donors whose name (English or Hebrew, either order), e-mail, phone digits or account number
 * match, and their payments. A text matching more donors than that is left to the read API's walk
 * (common, so its first page fills fast); one matching nobody finds nothing.
 */
async function resolveSearch(
  x: Ctx,
  q: PaymentListQuery,
): Promise<{ query: PaymentListQuery; narrow: Pick<PaymentFilter, 'receiptNum' | 'donorIds'> } | null> {
  const text = q.q?.trim();
  if (!text) return { query: q, narrow: {} };
  const { q: _q, ...rest } = q;
  if (await findPaymentRow(x.deps.db, x.org.id, text)) return { query: rest, narrow: { receiptNum: text } };
  const donorIds = await donorIdsForSearch(x.deps.db, x.org.id, text, SEARCH_DONORS + 1);
  if (donorIds.length > SEARCH_DONORS) return { query: q, narrow: {} };
  if (donorIds.length === 0) return null;
  return { query: rest, narrow: { donorIds } };
}

export async function searchPayments(x: Ctx, q: PaymentListQuery) {
  const search = await resolveSearch(x, q);
  if (!search) {
    // Still checks the other filters (a bad date is a 400 whatever q finds).
    await listPayments(x.deps, caller(x), { ...q, q: undefined, limit: 1 }, { donorIds: [] });
    return { payments: [], nextCursor: null };
  }
  return listPayments(x.deps, caller(x), search.query, search.narrow);
}

export async function exportPayments(x: Ctx, q: PaymentListQuery) {
  const search = await resolveSearch(x, q);
  return paymentsCsv(
    x.deps,
    caller(x),
    search?.query ?? { ...q, q: undefined },
    search?.narrow ?? { donorIds: [] },
  );
}
export const paymentDetail = (x: Ctx, receiptNum: string) => getPayment(x.deps, caller(x), receiptNum, {});

/** The organisation's payment with this receipt number, else 404 (before a refund reaches its port). */
export async function requirePayment(x: Ctx, receiptNum: string) {
  // Exact (the unique index); the receipt numbers the console shows are exact.
  const payment = await findPaymentRow(x.deps.db, x.org.id, receiptNum);
  if (!payment) throw notFound(`Payment ${receiptNum}`);
  return payment;
}

export async function voidFromConsole(x: Ctx, receiptNum: string, reason: string | null) {
  const payment = await requirePayment(x, receiptNum);
  const sandbox = payment.gatewayName === SANDBOX_GATEWAY;
  return voidPayment(x.deps, consoleCaller(x.org, x.user, sandbox), {
    orgGuid: x.org.guid,
    receiptNum: payment.receiptNum,
    reason,
  });
}

// --- schedules ---------------------------------------------------------------------------------

export const scheduleList = (x: Ctx, q: { status?: string | undefined; limit: number }) =>
  listSchedules(x.deps, caller(x), { orgGuid: x.org.guid, ...q });

export async function scheduleDetail(x: Ctx, scheduleNum: number) {
  const summary = await findScheduleSummary(x.deps.db, x.org.id, scheduleNum);
  if (!summary) throw notFound(`Schedule ${scheduleNum}`);
  const [instalments, failures] = await Promise.all([
    listInstalments(x.deps.db, x.org.id, scheduleNum),
    listScheduleFailures(x.deps.db, x.org.id, scheduleNum),
  ]);
  const upcoming = new Set(['pending', 'paused', 'charging']);
  const withDates = instalments.map((i) => ({ ...i, hebrewDateHebrew: hebrewDateOf(i.dueDate).he }));
  return {
    schedule: toScheduleSummary(summary),
    upcoming: withDates.filter((i) => upcoming.has(i.status)),
    instalments: withDates,
    failures,
  };
}

export const changeSchedule = (x: Ctx, scheduleNum: number, action: 'pause' | 'resume' | 'cancel') =>
  changeScheduleState(x.deps, caller(x), x.org.guid, scheduleNum, action);

// --- donors, collectors, campaigns, reasons ------------------------------------------------------

/** Donor cursors: base64url of `d|<id>` (the read API's form). */
const donorCursor = (id: number) => Buffer.from(`d|${id}`).toString('base64url');
function afterDonor(cursor: string | undefined): number {
  if (cursor === undefined) return 0;
  const m = /^d\|(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!m)
    throw validationError([
      { field: 'cursor', message: 'is not a cursor this API gave (use nextCursor as given)' },
    ]);
  return Number(m[1]);
}

export async function donorSearch(
  x: Ctx,
  q: { q?: string | undefined; cursor?: string | undefined; limit: number },
) {
  const ids = await donorIdsForSearch(
    x.deps.db,
    x.org.id,
    q.q?.trim() ?? '',
    q.limit + 1,
    afterDonor(q.cursor),
  );
  const page = ids.slice(0, q.limit);
  const people = await findPeopleByIds(x.deps.db, 'donor', page);
  const merged = await mergedInto(
    x.deps.db,
    x.org.id,
    people.map((p) => p.accountNum),
  );
  return {
    donors: people.map((p) => ({
      ...toRecord('donor', x.org.guid, p),
      mergedInto: merged.get(p.accountNum) ?? null,
    })),
    nextCursor: ids.length > q.limit ? donorCursor(page.at(-1)!) : null,
  };
}

export async function donorDetail(x: Ctx, accountNum: string) {
  const detail = await getDonor(x.deps, caller(x), accountNum, {});
  const donor = await findPerson(x.deps.db, 'donor', x.org.id, accountNum);
  const [merges, into] = await Promise.all([
    listDonorMerges(x.deps.db, x.org.id, donor!.id),
    mergedInto(x.deps.db, x.org.id, [donor!.accountNum]),
  ]);
  return { ...detail, mergedInto: into.get(donor!.accountNum) ?? null, merges };
}

/** Edit an existing donor with SaveDonor's rules (404 when the organisation has no such donor). */
export async function editDonor(x: Ctx, accountNum: string, patch: Omit<PersonPatch, 'orgGuid' | 'id'>) {
  const existing = await findPerson(x.deps.db, 'donor', x.org.id, accountNum);
  if (!existing) throw notFound(`Donor ${accountNum}`);
  return saveDonor(x.deps, caller(x), { ...patch, orgGuid: x.org.guid, id: existing.accountNum });
}

export async function collectorList(x: Ctx) {
  const ids = await listCollectorIds(x.deps.db, x.org.id, 5000);
  const people = await findPeopleByIds(x.deps.db, 'collector', ids);
  return { collectors: people.map((p) => toRecord('collector', x.org.guid, p)) };
}

/** Save a collector with SaveCollector's rules: `id` '' creates, an unknown id is 404. */
export const saveConsoleCollector = (x: Ctx, id: string, patch: Omit<PersonPatch, 'orgGuid' | 'id'>) =>
  saveCollector(x.deps, caller(x), { ...patch, orgGuid: x.org.guid, id });

export const campaignList = async (x: Ctx) => ({ campaigns: await listCampaignRows(x.deps.db, x.org.id) });
export const reasonList = async (x: Ctx) => ({ reasons: await listReasonRows(x.deps.db, x.org.id) });
export const saveConsoleCampaign = (x: Ctx, cmd: Omit<SaveCampaignCommand, 'orgGuid'>) =>
  saveCampaign(x.deps, caller(x), { ...cmd, orgGuid: x.org.guid });
export const saveConsoleReason = (x: Ctx, cmd: Omit<SaveReasonCommand, 'orgGuid'>) =>
  saveReason(x.deps, caller(x), { ...cmd, orgGuid: x.org.guid });

// --- devices -----------------------------------------------------------------------------------

export async function deviceList(x: Ctx) {
  const [list, locations] = await Promise.all([
    listOrgDevices(x.deps.db, x.org.guid, x.deps.now()),
    deviceLocations(x.deps.db, x.org.id),
  ]);
  return { devices: list.devices.map((d) => ({ ...d, location: locations.get(d.deviceId) ?? null })) };
}

async function oneDevice(x: Ctx, deviceId: string) {
  const device = (await deviceList(x)).devices.find((d) => d.deviceId === deviceId);
  if (!device) throw notFound(`Device ${deviceId}`);
  return device;
}

/**
 * A new terminal waiting to be paired: its one-time pairing code (15 minutes) and the address
 * that opens the terminal's pairing screen on this server with the code in its fragment.
 */
export async function pairNewDevice(
  x: Ctx,
  origin: string,
  d: { name: string; location?: string | null | undefined; sandbox: boolean },
) {
  const created = await createDevice(x.deps.db, x.org.guid, d.name, d.sandbox, x.deps.now());
  if (d.location) await updateDeviceDetails(x.deps.db, x.org.id, created.deviceId, { location: d.location });
  return {
    deviceId: created.deviceId,
    name: created.name,
    location: d.location ?? null,
    sandbox: created.sandbox,
    pairingCode: created.pairingCode,
    pairingUrl: `${origin}/terminal/#pair=${created.pairingCode}`,
    expiresAt: created.expiresAt,
  };
}

export async function editDevice(
  x: Ctx,
  deviceId: string,
  patch: { name?: string | undefined; location?: string | null | undefined },
) {
  if (!(await updateDeviceDetails(x.deps.db, x.org.id, deviceId, patch)))
    throw notFound(`Device ${deviceId}`);
  return oneDevice(x, deviceId);
}

export async function revokeConsoleDevice(x: Ctx, deviceId: string) {
  await revokeOrgDevice(x.deps.db, x.org.guid, deviceId, x.deps.now());
  return oneDevice(x, deviceId);
}

export const shiftList = (
  x: Ctx,
  q: { deviceId?: string | undefined; from?: string | undefined; to?: string | undefined; limit: number },
) => getShifts(x.deps, caller(x), q);

// --- integrations ------------------------------------------------------------------------------

export async function integrations(x: Ctx) {
  const [apiKeys, sources, webhooks, gateway] = await Promise.all([
    listApiKeyRows(x.deps.db, x.org.id),
    listSourceRows(x.deps.db, x.org.id),
    listWebhookEndpoints(x.deps.db, x.org.id),
    findOrgGateway(x.deps.db, x.org.id),
  ]);
  return { apiKeys, sources, webhooks, gateway: gateway ?? { provider: null, url: null, keyLast4: null } };
}

/** A new API key: the key itself is answered this once (stored only as its hash). */
export async function newApiKey(x: Ctx, name: string | null, sandbox: boolean) {
  const created = await createApiKey(x.deps.db, x.org.guid, sandbox, name);
  const id = await credentialIdByHash(x.deps.db, 'api_keys', x.org.id, hashCredential(created.apiKey));
  const row = (await listApiKeyRows(x.deps.db, x.org.id)).find((k) => k.id === id)!;
  return { ...row, apiKey: created.apiKey };
}

/** A new external source (a donation form's GUID): answered this once. */
export async function newSource(x: Ctx, name: string, sandbox: boolean) {
  const created = await createSource(x.deps.db, x.org.guid, name, 'external', sandbox);
  const id = await credentialIdByHash(x.deps.db, 'sources', x.org.id, hashCredential(created.sourceGuid));
  const row = (await listSourceRows(x.deps.db, x.org.id)).find((s) => s.id === id)!;
  return { ...row, sourceGuid: created.sourceGuid };
}

export async function revokeById(x: Ctx, what: 'api_keys' | 'sources', id: number) {
  const revokedAt = await revokeCredentialById(x.deps.db, what, x.org.id, id);
  if (revokedAt === null) throw notFound(what === 'api_keys' ? `API key ${id}` : `Source ${id}`);
  return { id, revokedAt };
}

/** Set (or remove, with null) a webhook URL: a new URL's signing secret is answered this once. */
export async function setWebhook(x: Ctx, kind: WebhookKind, url: string | null) {
  const result = await updateSettings(x.deps.db, x.org.guid, { webhooks: { [kind]: url } });
  const endpoint = result.webhooks.find((w) => w.kind === kind) ?? null;
  return {
    kind,
    url: endpoint?.url ?? null,
    disabled: endpoint?.disabled ?? false,
    ...(result.webhookSecrets?.[kind] ? { secret: result.webhookSecrets[kind].secret } : {}),
  };
}

export const rotateWebhook = (x: Ctx, kind: WebhookKind) => rotate(x.deps.db, x.org.guid, kind, x.deps.now());
export const deliveryList = (
  x: Ctx,
  f: { status?: string | undefined; kind?: string | undefined; limit: number },
) => deliveries(x.deps.db, x.org.guid, f);
export const attemptsOf = (x: Ctx, id: number) => deliveryAttempts(x.deps.db, x.org.guid, id);
export const replayDelivery = (x: Ctx, id: number) =>
  replay(x.deps.db, x.org.guid, { deliveryId: id }, x.deps.now());

/** Configure the gateway: the key is stored sealed and answered only as its last 4 characters. */
export const changeGateway = (x: Ctx, change: GatewayChange) =>
  setOrgGateway(x.deps.db, x.deps.gateways, x.org.guid, change, x.deps.now());

// --- settings ----------------------------------------------------------------------------------

export async function consoleSettings(x: Ctx) {
  const org = await consoleOrg(x.deps, x.user);
  return { name: org.name, currencies: org.currencies, settings: org.settings };
}

export async function patchSettings(
  x: Ctx,
  patch: { name?: string | undefined; currencies?: Parameters<typeof updateSettings>[2]['currencies'] } & {
    settings: NonNullable<Parameters<typeof updateSettings>[2]['settings']>;
  },
) {
  await updateSettings(x.deps.db, x.org.guid, { currencies: patch.currencies, settings: patch.settings });
  if (patch.name !== undefined) await renameOrg(x.deps.db, x.org.id, patch.name);
  return consoleSettings(x);
}
