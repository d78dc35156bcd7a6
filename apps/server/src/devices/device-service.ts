/**
 * Device sync: pairing a terminal, the operations it pushes from its outbox, and the reference
 * data it pulls. A pushed operation runs through the same services as the External API (one path
 * for money) under its own opId as idempotency key, so a replayed batch answers the same again
 * and charges nothing twice.
 */
import { randomInt } from 'node:crypto';
import {
  type ChargeCommand,
  chargeRequest,
  DEVICE_ERROR_CODES,
  type DeviceSettings,
  ERROR_CODES,
  type OpResult,
  type PullResponse,
  type PushRequest,
  type PushResponse,
  type pairRequest,
  type ScheduleCommand,
  type SealedSecrets,
  type ShiftCloseResponse,
  type SyncOperation,
  saveDonorRequest,
  scheduleRequest,
  sealAad,
  sealAadV2,
  sealedSecrets,
  type shiftCloseRequest,
  toMinorUnits,
  voidRequest,
  withoutBidiControls,
} from '@kupah/contracts';
import { EnvelopeError } from '@kupah/envelope';
import type { z } from 'zod';
import { fingerprintsOf } from '../abuse/fingerprint.ts';
import { requireOrg } from '../admin/admin-service.ts';
import { hashCredential, maskCredential, newSourceGuid } from '../auth/credentials.ts';
import { type Caller, findSourceCaller, insertSource } from '../auth/repo.ts';
import type { Db } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError, fromZod, notFound, validationError } from '../http/errors.ts';
import { commandHash } from '../http/request-hash.ts';
import { findKeyAnswer } from '../idempotency/repo.ts';
import type { Org } from '../orgs/repo.ts';
import { charge, voidPayment } from '../payments/payment-service.ts';
import { newContactKey, personForDevice } from '../people/contact-mask.ts';
import { saveDonorOnce } from '../people/people-service.ts';
import { deviceReceiptSettingsOf, queueDeviceReceipt, type ReceiptAsk } from '../receipts/receipt-service.ts';
import { schedulePayment } from '../schedules/schedule-service.ts';
import { currentEnvelopeKey, envelopeOpener, signingPublicKey } from './envelope-keys.ts';
import {
  heldOfflineMinor,
  markOpsSeen,
  offlineVerdictOf,
  recordOfflineAmount,
  sealV2Since,
  settleOfflineVerdict,
} from './ops-seen.ts';
import {
  contactKeyOf,
  type DeviceRow,
  findDeviceBySourceHash,
  insertDevice,
  listDevices,
  lockDeviceByPairingCode,
  markPaired,
  type PullPosition,
  pullChanges,
  recordReport,
  recordSeen,
  revokeDevice,
  touchSeen,
} from './repo.ts';
import { recordShift, serverShiftTotals } from './shift-repo.ts';

export const PAIRING_TTL_MS = 15 * 60_000;
/** No 0/O, 1/I/L: codes are read aloud and typed by hand. */
const CODE_ALPHABET = 'ABCDEFGHJKMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
/**
 * Operations of one push run at once. Each holds a database connection only while it claims and
 * while it records; gateway calls are bounded by `deps.calls` (per organisation and gateway).
 */
const PUSH_CONCURRENCY = 100;
const PULL_PAGE = 500;

export interface DeviceContext {
  caller: Caller;
  device: DeviceRow;
}

// ---------------------------------------------------------------------------------------------
// Pairing codes and device administration

function newPairingCode(): string {
  let s = '';
  for (let i = 0; i < CODE_LENGTH; i++) s += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `${s.slice(0, 4)}-${s.slice(4)}`;
}

/** Case, spaces and dashes do not matter when the code is typed. */
const normaliseCode = (code: string): string => code.toUpperCase().replace(/[^A-Z0-9]/g, '');

function newDeviceId(): string {
  let s = '';
  for (let i = 0; i < 10; i++) s += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return `dev_${s.toLowerCase()}`;
}

export async function createDevice(db: Db, orgGuid: string, name: string, sandbox: boolean, now: Date) {
  const org = await requireOrg(db, orgGuid);
  const pairingCode = newPairingCode();
  const expiresAt = new Date(now.getTime() + PAIRING_TTL_MS);
  const device = await insertDevice(db, {
    deviceId: newDeviceId(),
    orgId: org.id,
    name,
    sandbox,
    codeHash: hashCredential(normaliseCode(pairingCode)),
    expiresAt,
  });
  return {
    orgGuid: org.guid,
    deviceId: device.deviceId,
    name,
    sandbox,
    pairingCode,
    expiresAt: expiresAt.toISOString(),
  };
}

function describeDevice(d: DeviceRow, now: Date) {
  let status: 'waiting for pairing' | 'pairing code expired' | 'paired' | 'revoked';
  if (d.revokedAt) status = 'revoked';
  else if (d.pairedAt) status = 'paired';
  else
    status = d.pairingExpiresAt && d.pairingExpiresAt > now ? 'waiting for pairing' : 'pairing code expired';
  return {
    deviceId: d.deviceId,
    name: d.name,
    status,
    sandbox: d.sandbox,
    pairedAt: d.pairedAt?.toISOString() ?? null,
    lastSeenAt: d.lastSeenAt?.toISOString() ?? null,
    appVersion: d.appVersion,
    queueDepth: d.queueDepth,
    queueTotalMinor: d.queueTotalMinor,
    queueByKid: d.queueByKid,
    lastPushOperations: d.lastPushOps,
    lastShiftClosedAt: d.lastShiftClosedAt?.toISOString() ?? null,
    revokedAt: d.revokedAt?.toISOString() ?? null,
  };
}

export async function listOrgDevices(db: Db, orgGuid: string, now: Date) {
  const org = await requireOrg(db, orgGuid);
  return { orgGuid: org.guid, devices: (await listDevices(db, org.id)).map((d) => describeDevice(d, now)) };
}

export async function revokeOrgDevice(db: Db, orgGuid: string, deviceId: string, now: Date) {
  const org = await requireOrg(db, orgGuid);
  const device = await db.transaction((tx) => revokeDevice(tx, org.id, deviceId));
  if (!device) throw notFound(`Device ${deviceId}`);
  return { orgGuid: org.guid, device: describeDevice(device, now) };
}

// ---------------------------------------------------------------------------------------------
// Authentication of a device's requests

/** The device of a credential: 401 unknown, 403 DEVICE_REVOKED when the organisation revoked it. */
export async function deviceOf(db: Db, credential: string): Promise<DeviceContext> {
  const guidHash = hashCredential(credential);
  const found = await findDeviceBySourceHash(db, guidHash);
  if (!found) throw new ApiError(401, ERROR_CODES.UNAUTHORIZED, 'The device credential is unknown');
  if (found.device.revokedAt || found.sourceRevoked) {
    throw new ApiError(
      403,
      DEVICE_ERROR_CODES.DEVICE_REVOKED,
      'This device was revoked by the organisation: nothing more is accepted from it. Pair it again with a new code.',
    );
  }
  const caller = await findSourceCaller(db, guidHash);
  if (!caller) throw new ApiError(401, ERROR_CODES.UNAUTHORIZED, 'The device credential is unknown');
  return { caller, device: found.device };
}

// ---------------------------------------------------------------------------------------------
// Settings, pairing and pull

function settingsFor(org: Org, device: { name: string; sandbox: boolean }): DeviceSettings {
  const s = org.settings;
  return {
    orgGuid: org.guid,
    orgName: org.name,
    currencies: org.currencies,
    scheduleMode: s.scheduleMode,
    timezone: s.timezone,
    il: s.il,
    shabbatShift: s.shabbatShift,
    sandbox: device.sandbox,
    deviceName: device.name,
    offline: s.offline,
    presetsMinor: s.terminal.presetsMinor,
    coverFeePercent: s.terminal.coverFeePercent,
    providerNames: s.terminal.providerNames,
    brand: s.terminal.brand,
    receipts: deviceReceiptSettingsOf(org),
  };
}

const START: PullPosition = { xid: '0', rank: -1, id: 0 };

function encodeCursor(p: PullPosition): string {
  return Buffer.from(JSON.stringify([p.xid, p.rank, p.id])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): PullPosition {
  if (!cursor) return START;
  try {
    const [xid, rank, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown[];
    if (typeof xid === 'string' && /^\d{1,20}$/.test(xid) && Number.isInteger(rank) && Number.isInteger(id)) {
      return { xid, rank: rank as number, id: id as number };
    }
  } catch {
    // fall through
  }
  throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, 'The pull cursor is not one this server gave', [
    { field: 'cursor', message: 'is not a cursor from a previous pull; omit it to start again' },
  ]);
}

async function pullFor(deps: Deps, ctx: DeviceContext, cursor: string | undefined, limit: number) {
  const from = decodeCursor(cursor);
  const rows = await pullChanges(deps.db, ctx.caller.org.id, from, limit);
  // Devices get contact details masked, with keyed hashes to find a donor by an exact value.
  const contactKey = await contactKeyOf(deps.db, ctx.caller.org.id, newContactKey);
  // Exhausted: the next pull starts at the horizon (every older transaction has been read).
  const next: PullPosition = rows.more && rows.last ? rows.last : { xid: rows.horizon, rank: -1, id: 0 };
  return {
    cursor: encodeCursor(next),
    more: rows.more,
    settings: settingsFor(ctx.caller.org, ctx.device),
    encryptionKey: await currentEnvelopeKey(deps.db, ctx.caller.org),
    signingKey: await signingPublicKey(deps.db, ctx.caller.org),
    campaigns: rows.campaigns,
    reasons: rows.reasons,
    collectors: rows.collectors.map((p) => personForDevice(p, contactKey)),
    donors: rows.donors.map((p) => personForDevice(p, contactKey)),
    contactKey,
    serverTime: deps.now().toISOString(),
  } satisfies PullResponse;
}

export async function pull(
  deps: Deps,
  ctx: DeviceContext,
  cursor: string | undefined,
  limit: number | undefined,
  report: {
    deviceName?: string | undefined;
    queueDepth?: number | undefined;
    queueTotalMinor?: number | undefined;
  } = {},
): Promise<PullResponse> {
  const name = report.deviceName?.trim() ? withoutBidiControls(report.deviceName.trim()) : null;
  if (name !== null || report.queueDepth !== undefined) {
    await recordReport(deps.db, ctx.device.id, {
      name,
      queueDepth: report.queueDepth ?? null,
      queueTotalMinor: report.queueTotalMinor ?? null,
    });
  } else {
    await touchSeen(deps.db, ctx.device.id);
  }
  const current = name === null ? ctx : { ...ctx, device: { ...ctx.device, name } };
  return pullFor(deps, current, cursor, limit ?? PULL_PAGE);
}

const pairingRefused = () =>
  new ApiError(
    400,
    DEVICE_ERROR_CODES.PAIRING_CODE_INVALID,
    'The pairing code is unknown, already used or expired: ask for a new one (npm run admin -- device create)',
    [{ field: 'pairingCode', message: 'is unknown, already used or expired' }],
  );

export async function pairDevice(deps: Deps, req: z.output<typeof pairRequest>) {
  const codeHash = hashCredential(normaliseCode(req.pairingCode));
  const now = deps.now();
  const credential = newSourceGuid();
  const device = await deps.db.transaction(async (tx) => {
    const d = await lockDeviceByPairingCode(tx, codeHash);
    if (!d || d.revokedAt || d.pairedAt || !d.pairingExpiresAt || d.pairingExpiresAt <= now) return null;
    const name = req.deviceName?.trim() || d.name;
    const sourceId = await insertSource(
      tx,
      d.orgId,
      hashCredential(credential),
      maskCredential(credential),
      name,
      'device',
      d.sandbox,
    );
    await markPaired(tx, d.id, sourceId, req.appVersion ?? null, name);
    return d;
  });
  if (!device) throw pairingRefused();
  const ctx = await deviceOf(deps.db, credential);
  const first = await pullFor(deps, ctx, undefined, PULL_PAGE);
  return {
    deviceId: device.deviceId,
    credential,
    settings: first.settings,
    encryptionKey: first.encryptionKey,
    // Pinned by the device: every envelope key it adopts later must verify under it.
    signingKey: await signingPublicKey(deps.db, ctx.caller.org),
    pull: first,
  };
}

// ---------------------------------------------------------------------------------------------
// Push

const CLEAR_SECRETS: [string, string][] = [
  ['card', 'ccNum'],
  ['card', 'cvv'],
  ['bankAccount', 'accountNum'],
  ['bankAccount', 'routingNum'],
];

class OpFailure extends Error {
  constructor(
    readonly errorCode: string,
    message: string,
    readonly retryable = false,
    readonly fields?: { field: string; message: string }[],
  ) {
    super(message);
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Card and bank numbers come sealed, never in the clear request of a device. */
function refuseClearSecrets(request: Record<string, unknown>): void {
  for (const [group, field] of CLEAR_SECRETS) {
    const g = request[group];
    if (isRecord(g) && g[field] != null && g[field] !== '') {
      throw new OpFailure(
        ERROR_CODES.VALIDATION_FAILED,
        `${group}.${field} must be sealed, never sent in clear by a device`,
        false,
        [{ field: `${group}.${field}`, message: 'must be in the sealed envelope' }],
      );
    }
  }
}

/** The request with the opened secrets put back, and the device's facts filled in. */
function fullRequest(
  op: SyncOperation,
  secrets: SealedSecrets | null,
  ctx: DeviceContext,
): Record<string, unknown> {
  refuseClearSecrets(op.request);
  const req: Record<string, unknown> = structuredClone(op.request);
  if (secrets?.card) req.card = { ...(isRecord(req.card) ? req.card : {}), ...secrets.card };
  if (secrets?.bankAccount) {
    req.bankAccount = { ...(isRecord(req.bankAccount) ? req.bankAccount : {}), ...secrets.bankAccount };
  }
  if (req.orgGUID === undefined && req.orgGuid === undefined) req.orgGUID = ctx.caller.org.guid;
  if (op.kind === 'charge' || op.kind === 'schedule') {
    const sent = req.uniqueTransactionId;
    if (sent !== undefined && String(sent).toLowerCase() !== op.opId.toLowerCase()) {
      throw new OpFailure(ERROR_CODES.VALIDATION_FAILED, 'uniqueTransactionId must equal the opId', false, [
        { field: 'uniqueTransactionId', message: 'must equal the operation opId' },
      ]);
    }
    req.uniqueTransactionId = op.opId;
    const info = isRecord(req.deviceInfo) ? req.deviceInfo : {};
    req.deviceInfo = {
      ...info,
      deviceName: info.deviceName ?? ctx.device.name,
      deviceCreatedDate: op.deviceCreatedDate,
    };
  }
  return req;
}

/** v1 boxes (device and opId only) are opened for this long after v2 came in, then refused. */
async function v1WindowEnd(deps: Deps, ctx: DeviceContext): Promise<Date | null> {
  const since = await sealV2Since(deps.db);
  if (!since) return null;
  return new Date(since.getTime() + ctx.caller.org.settings.offline.expiryHours * 3_600_000);
}

/**
 * Opens the operation's box under the v2 additional data (every clear field of the operation), so
 * a box moved onto other clear fields does not open. A box sealed by a terminal of the previous
 * version (v1: device and opId only) is opened only during the transition window after v2 came
 * in (the offline expiry, counted from the migration that introduced v2), and refused after it.
 */
async function openSecrets(deps: Deps, op: SyncOperation, ctx: DeviceContext): Promise<SealedSecrets | null> {
  if (!op.sealed) return null;
  const opener = await envelopeOpener(deps.db, ctx.caller.org);
  const box = op.sealed;
  const unknownKey = () =>
    new OpFailure(
      DEVICE_ERROR_CODES.ENVELOPE_UNKNOWN_KEY,
      `The envelope key ${box.kid} is not known to this server (retired?)`,
    );
  let value: unknown;
  try {
    value = await opener.open(box, sealAadV2(ctx.device.deviceId, op));
  } catch (err) {
    if (!(err instanceof EnvelopeError)) throw err;
    if (err.code === 'UNKNOWN_KEY') throw unknownKey();
    const v1 = await opener.open(box, sealAad(ctx.device.deviceId, op.opId)).then(
      (opened) => ({ opened }),
      (e: unknown) => {
        if (e instanceof EnvelopeError) return null;
        throw e;
      },
    );
    if (!v1) {
      throw new OpFailure(
        DEVICE_ERROR_CODES.ENVELOPE_INVALID,
        'The sealed card or bank data could not be opened: it was altered, the item it was sealed with was changed (amount, currency, donor, collector, schedule, time, …), or it belongs to another item. Not charged.',
      );
    }
    const until = await v1WindowEnd(deps, ctx);
    if (!until || deps.now() >= until) {
      throw new OpFailure(
        DEVICE_ERROR_CODES.ENVELOPE_OUTDATED,
        `The card or bank data was sealed by an older terminal version, accepted only until ${until?.toISOString() ?? 'the upgrade'}: not charged. Update the terminal and take the donation again.`,
      );
    }
    deps.logger.warn(
      { opId: op.opId, device: ctx.device.deviceId, until: until.toISOString() },
      'device operation sealed under v1 additional data accepted (transition window)',
    );
    value = v1.opened;
  }
  const parsed = sealedSecrets.safeParse(value);
  if (!parsed.success) {
    throw new OpFailure(DEVICE_ERROR_CODES.ENVELOPE_INVALID, 'The sealed data has the wrong shape');
  }
  return parsed.data;
}

function parseOrFail<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const parsed = schema.safeParse(body);
  if (!parsed.success) {
    const e = fromZod(parsed.error);
    throw new OpFailure(e.code, e.message, false, e.fields);
  }
  return parsed.data;
}

const blank = (op: SyncOperation): Omit<OpResult, 'status' | 'retryable' | 'error'> => ({
  opId: op.opId,
  kind: op.kind,
  receiptNum: null,
  scheduleNum: null,
  accountNum: null,
});

/**
 * Answers an item is sent again for: another request is processing it, the outcome is being
 * confirmed with the gateway (the same opId later answers the outcome), or nothing was charged
 * because the gateway could not be reached.
 */
const RETRYABLE_CODES = new Set<string>([
  ERROR_CODES.REQUEST_IN_PROGRESS,
  ERROR_CODES.RATE_LIMITED,
  ERROR_CODES.PAYMENT_PENDING,
  ERROR_CODES.GATEWAY_UNAVAILABLE,
  // The device's credential is cooling off after too many declines: its other queued donations
  // (often taken offline, with the donor long gone) go after the cool-off, not lost. Nothing was
  // sent to the gateway; a card refused as such (CARD_TESTING_SUSPECTED) stays final.
  ERROR_CODES.TOO_MANY_DECLINES,
]);
const isRetryable = (code: string | null | undefined): boolean => code != null && RETRYABLE_CODES.has(code);

/** The op result of a service's answer (also of a stored answer replayed after expiry). */
function resultOf(op: SyncOperation, body: unknown): OpResult {
  const b = (isRecord(body) ? body : {}) as Record<string, unknown>;
  const err = isRecord(b.error) ? b.error : null;
  const error =
    err && typeof err.errorCode === 'string'
      ? { errorCode: err.errorCode, message: String(err.message ?? '') }
      : null;
  const str = (v: unknown) => (v === null || v === undefined ? null : String(v));
  switch (op.kind) {
    case 'charge': {
      const status =
        b.paymentStatus === 'Success' || b.paymentStatus === 'Declined' ? b.paymentStatus : 'Error';
      return {
        ...blank(op),
        status,
        retryable: status === 'Error' && isRetryable(error?.errorCode),
        receiptNum: str(b.receiptNum),
        accountNum: str(b.accountNum),
        error: status === 'Success' ? null : error,
      };
    }
    case 'schedule': {
      const ok = b.paymentStatus === 'Success';
      const retryable = !ok && isRetryable(error?.errorCode);
      return {
        ...blank(op),
        status: ok ? 'Success' : retryable ? 'Error' : 'Declined',
        retryable,
        receiptNum: str(b.receiptNum),
        scheduleNum: str(b.scheduleNum),
        accountNum: str(b.accountNum),
        error: ok ? null : error,
      };
    }
    case 'saveDonor':
      return { ...blank(op), status: 'Success', retryable: false, accountNum: str(b.donorId), error: null };
    case 'void':
      return {
        ...blank(op),
        status: 'Success',
        retryable: false,
        receiptNum: str(b.receiptNum),
        error: null,
      };
  }
}

/** How far ahead of the server's clock a device's creation time may be (clock drift). */
export const DEVICE_CLOCK_SKEW_MS = 5 * 60_000;

/** An operation checked, opened and parsed, ready to run. */
type Ready =
  | { kind: 'charge'; command: ChargeCommand; hash: string }
  | { kind: 'schedule'; command: ScheduleCommand; hash: string }
  | { kind: 'saveDonor'; command: z.output<typeof saveDonorRequest>; hash: string }
  | { kind: 'void'; command: z.output<typeof voidRequest> };

type Prepared = { op: SyncOperation; done: OpResult } | { op: SyncOperation; ready: Ready };

/**
 * Refuses an operation that was not answered before; one that was (its answer lost on the way
 * back) gets that answer again, and one the gateway is still being asked about goes on to wait
 * for its outcome (null).
 */
async function refuseUnlessAnswered(
  deps: Deps,
  ctx: DeviceContext,
  op: SyncOperation,
  failure: OpFailure,
): Promise<OpResult | null> {
  const stored = await findKeyAnswer(deps.db, ctx.caller.org.id, op.opId);
  if (stored.kind === 'answered') return resultOf(op, stored.body);
  if (stored.kind === 'gone') throw failure;
  return null;
}

/**
 * The offline expiry, on the device's clock and on the server's: an item is refused when it was
 * taken longer ago than the limit by the device's time, or first seen by this server longer ago
 * than the limit (a device whose clock lies gets at most the limit from first sight); a creation
 * time ahead of the server's clock is answered "send it again later".
 */
async function checkExpiry(
  deps: Deps,
  ctx: DeviceContext,
  op: SyncOperation,
  firstSeen: Date | undefined,
): Promise<OpResult | null> {
  const now = deps.now().getTime();
  const limit = ctx.caller.org.settings.offline.expiryHours;
  const hoursOld = (now - Date.parse(op.deviceCreatedDate)) / 3_600_000;
  const hoursSeen = firstSeen ? (now - firstSeen.getTime()) / 3_600_000 : 0;
  if (hoursOld > limit || hoursSeen > limit) {
    // Forwarded before it expired and answered (or still being confirmed), but the answer was
    // lost: the same answer again, or the outcome once it is known.
    const why =
      hoursOld > limit
        ? `Taken offline ${Math.floor(hoursOld)} hours ago`
        : `First sent to the server ${Math.floor(hoursSeen)} hours ago`;
    return refuseUnlessAnswered(
      deps,
      ctx,
      op,
      new OpFailure(
        DEVICE_ERROR_CODES.OFFLINE_EXPIRED,
        `${why}, more than the ${limit} hours allowed: not charged`,
      ),
    );
  }
  if (Date.parse(op.deviceCreatedDate) > now + DEVICE_CLOCK_SKEW_MS) {
    throw new OpFailure(
      DEVICE_ERROR_CODES.DEVICE_CLOCK_AHEAD,
      `deviceCreatedDate ${op.deviceCreatedDate} is ahead of the server's clock (${deps.now().toISOString()}); set the device's clock right. It is sent again later.`,
      true,
    );
  }
  return null;
}

/** Checks, opens and parses an operation (no money moves here). */
async function prepare(
  deps: Deps,
  ctx: DeviceContext,
  op: SyncOperation,
  firstSeen: Date | undefined,
): Promise<Prepared> {
  if (op.kind === 'charge' || op.kind === 'schedule') {
    const answered = await checkExpiry(deps, ctx, op, firstSeen);
    if (answered) return { op, done: answered };
  }
  refuseClearSecrets(op.request);
  const secrets = await openSecrets(deps, op, ctx);
  const body = fullRequest(op, secrets, ctx);
  // Of the canonical command, as for the External API: spelling variants replay.
  const hash = (command: object) => commandHash(command, deps.requestHashKey, fingerprintsOf(deps));
  switch (op.kind) {
    case 'charge': {
      const command = parseOrFail(chargeRequest, body);
      if (op.offline === true) {
        await recordOfflineAmount(deps.db, ctx.device.id, op.opId, toMinorUnits(command.amount));
      }
      return { op, ready: { kind: 'charge', command, hash: hash(command) } };
    }
    case 'schedule': {
      const command = parseOrFail(scheduleRequest, body);
      if (op.offline === true) {
        await recordOfflineAmount(deps.db, ctx.device.id, op.opId, command.amounts.firstMinor);
      }
      return { op, ready: { kind: 'schedule', command, hash: hash(command) } };
    }
    case 'saveDonor': {
      const command = parseOrFail(saveDonorRequest, body);
      return { op, ready: { kind: 'saveDonor', command, hash: hash(command) } };
    }
    case 'void':
      return { op, ready: { kind: 'void', command: parseOrFail(voidRequest, body) } };
  }
}

const majorOf = (minor: number): string => (minor / 100).toFixed(2);

/**
 * The organisation's offline limits, judged by the server for an operation the device took
 * offline (the terminal checks them too, but a modified terminal would not): its largest single
 * charge (a schedule: its largest instalment) at most `perPaymentMinor`, and the device's offline
 * total when it took it (`heldOfflineMinor` plus its own amount, the first instalment of a
 * schedule, all currencies together as on the terminal) at most `totalMinor`. Judged once per
 * operation, in push order; the verdict is kept, so a replay answers the same.
 */
async function checkOfflineLimits(deps: Deps, ctx: DeviceContext, op: SyncOperation, ready: Ready) {
  if (op.offline !== true || (ready.kind !== 'charge' && ready.kind !== 'schedule')) return null;
  const limits = ctx.caller.org.settings.offline;
  const [amountMinor, largestMinor] =
    ready.kind === 'charge'
      ? [toMinorUnits(ready.command.amount), toMinorUnits(ready.command.amount)]
      : [
          ready.command.amounts.firstMinor,
          Math.max(ready.command.amounts.firstMinor, ready.command.amounts.perPaymentMinor),
        ];
  const overPayment = largestMinor > limits.perPaymentMinor;
  let verdict = await offlineVerdictOf(deps.db, ctx.device.id, op.opId);
  if (verdict === null) {
    const over =
      overPayment ||
      (await heldOfflineMinor(deps.db, ctx.device.id, op.opId, op.deviceCreatedDate)) + amountMinor >
        limits.totalMinor;
    verdict = await settleOfflineVerdict(deps.db, ctx.device.id, op.opId, over ? 'over' : 'ok');
  }
  if (verdict === 'ok') return null;
  return refuseUnlessAnswered(
    deps,
    ctx,
    op,
    new OpFailure(
      DEVICE_ERROR_CODES.OFFLINE_LIMIT_EXCEEDED,
      overPayment
        ? `Taken offline, one payment may be at most ${majorOf(limits.perPaymentMinor)}; this one is ${majorOf(largestMinor)}: not charged`
        : `Taken offline while this device held other items not yet forwarded: with this ${majorOf(amountMinor)} it would hold more than the ${majorOf(limits.totalMinor)} allowed offline: not charged`,
      false,
      [{ field: 'amount', message: 'is over the offline limits' }],
    ),
  );
}

async function execute(deps: Deps, ctx: DeviceContext, op: SyncOperation, ready: Ready): Promise<OpResult> {
  const { caller } = ctx;
  // The receipt goes where the donor asked on the device (written with the payment when it succeeds).
  const receipt = op.receiptEmail ? { email: op.receiptEmail, language: op.receiptLanguage ?? null } : null;
  switch (ready.kind) {
    case 'charge':
      return withReceipt(
        deps,
        caller,
        receipt,
        resultOf(op, await charge(deps, caller, ready.command, ready.hash, receipt)),
      );
    case 'schedule':
      return withReceipt(
        deps,
        caller,
        receipt,
        resultOf(op, await schedulePayment(deps, caller, ready.command, ready.hash, receipt)),
      );
    case 'saveDonor':
      return resultOf(op, await saveDonorOnce(deps, caller, ready.command, op.opId, ready.hash));
    case 'void':
      return resultOf(op, await voidPayment(deps, caller, ready.command));
  }
}

/**
 * A replayed operation (answered before, or recorded by recovery) may carry an address its first
 * push did not: its receipt is queued now, once (the same receipt to the same address is not
 * queued twice).
 */
async function withReceipt(
  deps: Deps,
  caller: DeviceContext['caller'],
  receipt: ReceiptAsk | null,
  result: OpResult,
): Promise<OpResult> {
  if (receipt && result.status === 'Success' && result.receiptNum) {
    await queueDeviceReceipt(deps, caller, result.receiptNum, receipt);
  }
  return result;
}

/** The operation's error answer for a refusal or a failure. */
function failureOf(deps: Deps, ctx: DeviceContext, op: SyncOperation, err: unknown): OpResult {
  if (err instanceof OpFailure) {
    return {
      ...blank(op),
      status: 'Error',
      retryable: err.retryable,
      error: {
        errorCode: err.errorCode,
        message: err.message,
        ...(err.fields ? { fields: err.fields } : {}),
      },
    };
  }
  if (err instanceof ApiError) {
    const retryable = err.status >= 500 || RETRYABLE_CODES.has(err.code);
    return {
      ...blank(op),
      status: 'Error',
      retryable,
      error: { errorCode: err.code, message: err.message, ...(err.fields ? { fields: err.fields } : {}) },
    };
  }
  deps.logger.error(
    {
      opId: op.opId,
      kind: op.kind,
      device: ctx.device.deviceId,
      err: { message: err instanceof Error ? err.message : String(err) },
    },
    'device operation failed',
  );
  return {
    ...blank(op),
    status: 'Error',
    retryable: true,
    error: {
      errorCode: ERROR_CODES.INTERNAL,
      message: 'The server could not process it now; it will be sent again',
    },
  };
}

/** Run `fn` over `items` with at most `n` at once; results in the items' order. */
async function mapLimited<T, R>(items: readonly T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

export async function push(deps: Deps, ctx: DeviceContext, req: PushRequest): Promise<PushResponse> {
  if (req.deviceId !== ctx.device.deviceId) {
    throw new ApiError(403, ERROR_CODES.FORBIDDEN, 'deviceId is not the device of this credential', [
      { field: 'deviceId', message: 'must be the id this device received when it was paired' },
    ]);
  }
  await recordSeen(deps.db, ctx.device.id, {
    appVersion: req.appVersion ?? null,
    queueDepth: req.queue.depth,
    queueTotalMinor: req.queue.totalMinor,
    queueByKid: req.queue.byKid ?? null,
    pushOps: req.operations.length,
  });
  // First sight of every operation, whatever its answer will be (the expiry counts from it too).
  const seen = await markOpsSeen(deps.db, ctx.device.id, req.operations, deps.now());
  // Checked, opened and parsed at once; then the offline limits in push order (each item's
  // total counts the ones before it); then the money.
  const steps = await mapLimited(req.operations, PUSH_CONCURRENCY, async (op): Promise<Prepared> => {
    try {
      return await prepare(deps, ctx, op, seen.get(op.opId));
    } catch (err) {
      return { op, done: failureOf(deps, ctx, op, err) };
    }
  });
  for (const [i, step] of steps.entries()) {
    if ('done' in step) continue;
    try {
      const done = await checkOfflineLimits(deps, ctx, step.op, step.ready);
      if (done) steps[i] = { op: step.op, done };
    } catch (err) {
      steps[i] = { op: step.op, done: failureOf(deps, ctx, step.op, err) };
    }
  }
  const results = await mapLimited(steps, PUSH_CONCURRENCY, async (step) => {
    if ('done' in step) return step.done;
    try {
      return await execute(deps, ctx, step.op, step.ready);
    } catch (err) {
      return failureOf(deps, ctx, step.op, err);
    }
  });
  for (const r of results) deps.metrics.deviceOperations.inc({ kind: r.kind, status: r.status });
  return {
    results,
    serverTime: deps.now().toISOString(),
    encryptionKey: await currentEnvelopeKey(deps.db, ctx.caller.org),
  };
}

// ---------------------------------------------------------------------------------------------
// End of shift

/**
 * Records a device's shift close (once per closeId) with the server's own totals of the same
 * shift, which the device shows beside its own.
 */
export async function closeShift(
  deps: Deps,
  ctx: DeviceContext,
  req: z.output<typeof shiftCloseRequest>,
): Promise<ShiftCloseResponse> {
  if (req.deviceId !== ctx.device.deviceId) {
    throw new ApiError(403, ERROR_CODES.FORBIDDEN, 'deviceId is not the device of this credential', [
      { field: 'deviceId', message: 'must be the id this device received when it was paired' },
    ]);
  }
  if (Date.parse(req.closedAt) < Date.parse(req.openedAt)) {
    throw validationError([{ field: 'closedAt', message: 'must not be before openedAt' }]);
  }
  const server =
    ctx.device.sourceId === null
      ? { succeeded: [], voided: [], declined: [] }
      : await serverShiftTotals(deps.db, ctx.device.sourceId, req.openedAt, req.closedAt);
  const recorded = await recordShift(deps.db, {
    orgId: ctx.caller.org.id,
    deviceRowId: ctx.device.id,
    closeId: req.closeId,
    openedAt: req.openedAt,
    closedAt: req.closedAt,
    closedBy: req.closedBy?.trim() || null,
    device: req.totals,
    server,
    at: deps.now(),
  });
  return { closeId: req.closeId, recordedAt: recorded.recordedAt.toISOString(), server: recorded.server };
}
