/**
 * Device sync: pairing, push (the terminal's outbox) and pull (reference data), shared by the
 * terminal and the server. A pushed operation carries an External API request body (as an
 * integrator would send it) with its card or bank fields removed and sealed in an envelope
 * under the server's public key; the server opens the envelope, puts the fields back, and runs
 * the same service an External API call runs.
 */
import { z } from 'zod';
import { CURRENCIES, guid, isGuid, optText, SCHEDULE_HANDLING_MODES, str, utcDateTime } from './common.ts';
import { ERROR_CODES, fieldError } from './errors.ts';
import { deviceReceiptSettings, RECEIPT_LANGUAGES, receiptEmail } from './receipts.ts';

const b64url = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9_-]*$/, 'must be base64url');

// ---------------------------------------------------------------------------------------------
// Envelope

/** A public P-256 key as a JWK (what the server hands to devices). */
export const envelopePublicJwk = z.object({
  kty: z.literal('EC'),
  crv: z.literal('P-256'),
  x: b64url(64),
  y: b64url(64),
});
export type EnvelopePublicJwk = z.infer<typeof envelopePublicJwk>;

export const envelopeKey = z.object({
  kid: str(64).min(1),
  jwk: envelopePublicJwk,
  /**
   * The server's signature of (organisation GUID, kid, x, y) with its signing key (ECDSA P-256,
   * base64url r ‖ s; see `signEnvelopeKey` in @kupah/envelope). A terminal adopts a new key only
   * when it verifies with the signing key it pinned at pairing.
   */
  sig: b64url(128).optional(),
});
export type EnvelopeKey = z.infer<typeof envelopeKey>;

/**
 * Sealed data: ECDH P-256 (ephemeral key `epk` with the server's key `kid`) → HKDF-SHA-256 →
 * AES-256-GCM. The additional data binds the box to one device and one operation.
 */
export const sealedBox = z.strictObject({
  v: z.literal(1),
  kid: str(64).min(1),
  epk: z.strictObject({ x: b64url(64), y: b64url(64) }),
  iv: b64url(32),
  ct: b64url(8192),
});
export type SealedBox = z.infer<typeof sealedBox>;

/**
 * The additional authenticated data of an operation's box, version 1: device and opId only.
 * Superseded by `sealAadV2` (the server still opens v1 boxes during a transition window only).
 */
export const sealAad = (deviceId: string, opId: string): string => `kupah/v1/${deviceId}/${opId}`;

/**
 * JSON with every object's keys sorted (arrays keep their order), with JSON's own rules otherwise
 * (undefined members dropped): the same value gives the same text on the terminal and the server.
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const o = v as Record<string, unknown>;
    return Object.fromEntries(
      Object.keys(o)
        .sort()
        .map((k) => [k, o[k]]),
    );
  });
}

/** The clear fields of an operation its box is bound to (what `sealAadV2` reads). */
export interface SealBinding {
  opId: string;
  kind: SyncOperationKind;
  deviceCreatedDate: string;
  offline?: boolean | null;
  request: Record<string, unknown>;
}

/**
 * The additional authenticated data of an operation's box, version 2: the device and every clear
 * field of the operation — opId, kind, the device's creation time, the offline flag and the whole
 * request (amount, currency, method, donor, collector, campaign, reasons, schedule terms,
 * uniqueTransactionId, …) as canonical JSON. A box moved onto other clear fields (another amount,
 * donor, time, …) does not open. One function for both sides: the terminal when it seals, the
 * server when it opens.
 */
export const sealAadV2 = (deviceId: string, op: SealBinding): string =>
  `kupah/v2/${canonicalJson({
    deviceId,
    opId: op.opId,
    kind: op.kind,
    deviceCreatedDate: new Date(op.deviceCreatedDate).toISOString(),
    offline: op.offline === true,
    request: op.request,
  })}`;

/** What is sealed: the fields of a request the device must not keep in clear. */
export const sealedSecrets = z.object({
  card: z.object({ ccNum: str(80).nullish(), cvv: str(8).nullish() }).nullish(),
  bankAccount: z.object({ accountNum: str(64).nullish(), routingNum: str(32).nullish() }).nullish(),
});
export type SealedSecrets = z.infer<typeof sealedSecrets>;

// ---------------------------------------------------------------------------------------------
// Settings a device receives

export const deviceSettings = z.object({
  orgGuid: guid(),
  orgName: z.string(),
  currencies: z.array(z.enum(CURRENCIES)).min(1),
  scheduleMode: z.enum(SCHEDULE_HANDLING_MODES),
  timezone: z.string(),
  il: z.boolean(),
  /**
   * Instalments falling on Shabbat or Yom Tov move to the next weekday (the organisation's
   * setting; absent from servers of earlier versions, which always moved them).
   */
  shabbatShift: z.boolean().optional(),
  sandbox: z.boolean(),
  deviceName: z.string(),
  offline: z.object({
    /** Largest single payment the device may take while offline, in minor units. */
    perPaymentMinor: z.number().int().positive(),
    /** Largest total the device may hold unsent, in minor units (all currencies together). */
    totalMinor: z.number().int().positive(),
    /** A queued item not forwarded within this many hours is not charged. */
    expiryHours: z.number().positive(),
  }),
  /** Preset amounts for the amount screen, in minor units. */
  presetsMinor: z.array(z.number().int().positive()).max(12),
  /** Percentage the donor may add to cover the processing fee (0 = not offered). */
  coverFeePercent: z.number().min(0).max(10),
  /** Charity-card providers' names (Provider_1 … Provider_4) as donors know them; absent: generic names. */
  providerNames: z.record(z.string(), z.string()).optional(),
  /** The organisation's kiosk look: a colour (#rrggbb) and a logo (data: URL). */
  brand: z.object({ color: z.string().optional(), logo: z.string().optional() }).optional(),
  /**
   * The organisation's receipt details (legal name, address, tax id, tax statement per language),
   * so a printed receipt says what the e-mailed one says, offline too. Absent from servers before
   * receipts.
   */
  receipts: deviceReceiptSettings.optional(),
});
export type DeviceSettings = z.infer<typeof deviceSettings>;

// ---------------------------------------------------------------------------------------------
// Reference data (pull)

export const refCampaign = z.object({
  campaignNum: z.number().int(),
  name: z.string().nullable(),
  friendlyName: z.string().nullable(),
});
export const refReason = z.object({
  reasonNum: z.number().int(),
  name: z.string().nullable(),
  nameHebrew: z.string().nullable(),
  campaignNum: z.number().int().nullable(),
});
export const refPerson = z.object({
  accountNum: z.string(),
  title: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  firstNameHebrew: z.string().nullable(),
  lastNameHebrew: z.string().nullable(),
  /** Masked for display only (`••• ••• 0142`): the numbers themselves are not sent (see `contactHashes`). */
  phones: z.array(z.string()),
  /** Masked for display only (`d•••@example.com`): the addresses themselves are not sent. */
  emails: z.array(z.string()),
  /**
   * HMAC-SHA-256 (hex) of each normalised phone number and e-mail address under the
   * organisation's `contactKey` (see {@link contactHashInput}): a donor is found by a whole phone
   * number or e-mail address typed exactly. Absent from servers before contact masking.
   */
  contactHashes: z.array(z.string().regex(/^[0-9a-f]{64}$/)).optional(),
});

/**
 * A phone number as compared: digits only, an international `00` prefix dropped, Israeli
 * (+972 → 0…) and North American (+1 → 10 digits) numbers in their national form. Null when too
 * short to be a whole number (fewer than 7 digits).
 */
export function normalisePhone(value: string): string | null {
  let digits = value.replace(/\D/g, '');
  if (digits.startsWith('00')) digits = digits.slice(2);
  if (digits.startsWith('972') && digits.length >= 11) digits = `0${digits.slice(3)}`;
  else if (digits.startsWith('1') && digits.length === 11) digits = digits.slice(1);
  return digits.length >= 7 ? digits : null;
}

/** An e-mail address as compared: trimmed and lowercased; null when it is not `x@y`. */
export function normaliseEmail(value: string): string | null {
  const email = value.trim().toLowerCase();
  return /^[^\s@]+@[^\s@]+$/.test(email) ? email : null;
}

/**
 * What is keyed-hashed for a contact (`phone:0521234567`, `email:d@example.com`), the same on the
 * server and the device; null when the value is no whole phone number or e-mail address.
 */
export function contactHashInput(kind: 'phone' | 'email', value: string): string | null {
  const normal = kind === 'phone' ? normalisePhone(value) : normaliseEmail(value);
  return normal === null ? null : `${kind}:${normal}`;
}
export type RefCampaign = z.infer<typeof refCampaign>;
export type RefReason = z.infer<typeof refReason>;
export type RefPerson = z.infer<typeof refPerson>;

export const pullQuery = z.strictObject({
  cursor: str(512).optional(),
  limit: z.coerce.number().int().min(1).max(2000).optional(),
  /**
   * What the device reports on each pull (every sync run ends with one): its name as set on the
   * device, and its queue after the run's pushes were answered — so the organisation's device
   * list shows the name the cashier gave it and what truly still waits.
   */
  deviceName: str(256).optional(),
  queueDepth: z.coerce
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .optional(),
  queueTotalMinor: z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER).optional(),
});

export const pullResponse = z
  .object({
    /** Opaque; send it back to get what changed since. */
    cursor: z.string(),
    /** More changes are waiting: pull again at once. */
    more: z.boolean(),
    settings: deviceSettings,
    encryptionKey: envelopeKey,
    campaigns: z.array(refCampaign),
    reasons: z.array(refReason),
    collectors: z.array(refPerson),
    donors: z.array(refPerson),
    /**
     * The organisation's contact key (32 bytes, base64url): the HMAC key of `contactHashes`.
     * Absent from servers before contact masking.
     */
    contactKey: b64url(64).optional(),
    /**
     * The organisation's public signing key. Devices pin it at pairing; one paired before envelope
     * keys were signed pins it from here the first time (over https or on this machine only).
     */
    signingKey: envelopePublicJwk.optional(),
    serverTime: z.string(),
  })
  .meta({ id: 'DevicePullResponse' });
export type PullResponse = z.infer<typeof pullResponse>;

// ---------------------------------------------------------------------------------------------
// Pairing

export const pairRequest = z
  .strictObject({
    pairingCode: str(32).min(1, 'is required'),
    deviceName: optText(),
    appVersion: str(64).nullish(),
  })
  .meta({ id: 'DevicePairRequest' });
export type PairRequest = z.input<typeof pairRequest>;

export const pairResponse = z
  .object({
    deviceId: z.string(),
    /** The device's source credential (`Authorization` GUID). Shown once; keep it encrypted. */
    credential: z.string().refine(isGuid),
    settings: deviceSettings,
    encryptionKey: envelopeKey,
    /** The server's public signing key (P-256): the terminal pins it and checks every envelope key with it. */
    signingKey: envelopePublicJwk,
    /** The first page of reference data. */
    pull: pullResponse,
  })
  .meta({ id: 'DevicePairResponse' });
export type PairResponse = z.infer<typeof pairResponse>;

// ---------------------------------------------------------------------------------------------
// Push

export const SYNC_OPERATION_KINDS = ['charge', 'schedule', 'saveDonor', 'void'] as const;
export type SyncOperationKind = (typeof SYNC_OPERATION_KINDS)[number];

export const syncOperation = z.strictObject({
  /** Made on the device at entry; also the request's uniqueTransactionId. A GUID. */
  opId: z.string().refine(isGuid, 'must be a GUID'),
  kind: z.enum(SYNC_OPERATION_KINDS),
  /** When the cashier took it, on the device's clock (UTC). */
  deviceCreatedDate: utcDateTime(),
  /**
   * The External API body (Charge, SchedulePayment, SaveDonor or VoidPayment) without the sealed
   * fields. Validated by the server with the operation's own schema once the secrets are back.
   */
  request: z.record(str(256), z.unknown()),
  /**
   * Taken while the device was offline (its offline limits applied). Bound in the sealed box's
   * additional data; the server applies the organisation's offline limits to such operations.
   */
  offline: z.boolean().optional(),
  sealed: sealedBox.nullish(),
  /**
   * charge and schedule only: e-mail the receipt here once the payment succeeds (the donor typed it
   * on the result screen, also for an anonymous donation). Used to deliver the receipt only: it is
   * not saved on a donor record. Not bound in the sealed box (it may be added after sealing).
   */
  receiptEmail: receiptEmail().nullish(),
  /** The receipt's language (the language the donor used on the terminal); absent: the server's choice. */
  receiptLanguage: z.enum(RECEIPT_LANGUAGES).nullish(),
});
export type SyncOperation = z.infer<typeof syncOperation>;

export const MAX_PUSH_OPERATIONS = 100;

export const pushRequest = z
  .strictObject({
    deviceId: str(64),
    appVersion: str(64).nullish(),
    /** The device's queue as it is before this push (observability and key retirement). */
    queue: z.strictObject({
      // The server keeps it in an int column: a larger count is a 400, never a failed UPDATE.
      depth: z
        .number()
        .int()
        .min(0)
        .max(2 ** 31 - 1, 'must be at most 2147483647'),
      totalMinor: z.number().int().min(0),
      /** Queued items per envelope key id. */
      byKid: z.record(str(64), z.number().int().min(0)).optional(),
    }),
    operations: z
      .array(syncOperation)
      .min(1, 'must have at least one operation')
      .max(MAX_PUSH_OPERATIONS, `must have at most ${MAX_PUSH_OPERATIONS} operations`),
  })
  .meta({ id: 'DevicePushRequest' });
export type PushRequest = z.infer<typeof pushRequest>;

export const OP_STATUSES = ['Success', 'Declined', 'Error'] as const;
export type OpStatus = (typeof OP_STATUSES)[number];

export const opResult = z.object({
  opId: z.string(),
  kind: z.enum(SYNC_OPERATION_KINDS),
  status: z.enum(OP_STATUSES),
  /** True when sending it again may succeed (server busy, in progress); false when it is final. */
  retryable: z.boolean(),
  receiptNum: z.string().nullable(),
  scheduleNum: z.string().nullable(),
  accountNum: z.string().nullable(),
  error: z
    .object({ errorCode: z.string(), message: z.string(), fields: z.array(fieldError).optional() })
    .nullable(),
});
export type OpResult = z.infer<typeof opResult>;

export const pushResponse = z
  .object({
    results: z.array(opResult),
    serverTime: z.string(),
    /** The key new items should be sealed with (changes when the server's key is rotated). */
    encryptionKey: envelopeKey,
  })
  .meta({ id: 'DevicePushResponse' });
export type PushResponse = z.infer<typeof pushResponse>;

/** Error codes particular to device sync (also in ERROR_CODES). */
export const DEVICE_ERROR_CODES = {
  DEVICE_REVOKED: ERROR_CODES.DEVICE_REVOKED,
  PAIRING_CODE_INVALID: ERROR_CODES.PAIRING_CODE_INVALID,
  OFFLINE_EXPIRED: ERROR_CODES.OFFLINE_EXPIRED,
  ENVELOPE_UNKNOWN_KEY: ERROR_CODES.ENVELOPE_UNKNOWN_KEY,
  ENVELOPE_INVALID: ERROR_CODES.ENVELOPE_INVALID,
  ENVELOPE_OUTDATED: ERROR_CODES.ENVELOPE_OUTDATED,
  OFFLINE_LIMIT_EXCEEDED: ERROR_CODES.OFFLINE_LIMIT_EXCEEDED,
  DEVICE_CLOCK_AHEAD: ERROR_CODES.DEVICE_CLOCK_AHEAD,
} as const;

// ---------------------------------------------------------------------------------------------
// End of shift: a device's totals since its last close, recorded on the server

const shiftRow = z.strictObject({
  method: str(32),
  currency: z.enum(CURRENCIES),
  count: z.number().int().min(0).max(1_000_000),
  amountMinor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});
export type ShiftRow = z.infer<typeof shiftRow>;

const shiftTotals = z.strictObject({
  /** Charged and not voided, by method and currency. */
  succeeded: z.array(shiftRow).max(200),
  voided: z.array(shiftRow).max(200),
  declined: z.array(shiftRow).max(200),
  /** Taken but not answered yet (device only). */
  queued: z.array(shiftRow).max(200).optional(),
});
export type ShiftTotals = z.infer<typeof shiftTotals>;

export const shiftCloseRequest = z
  .strictObject({
    deviceId: str(64),
    /** Made by the device when the shift was closed: sending it again records nothing twice. */
    closeId: z.uuid(),
    openedAt: utcDateTime(),
    closedAt: utcDateTime(),
    /** Who closed it, as typed on the device (optional). */
    closedBy: str(256).nullish(),
    totals: shiftTotals,
  })
  .meta({ id: 'ShiftCloseRequest' });
export type ShiftCloseRequest = z.input<typeof shiftCloseRequest>;

export const shiftCloseResponse = z
  .object({
    closeId: z.string(),
    recordedAt: z.string(),
    /**
     * The server's own totals of this device's payments taken in the shift (by the device's time),
     * as forwarded so far: what the device still had queued at the close is not in them yet.
     */
    server: shiftTotals,
  })
  .meta({ id: 'ShiftCloseResponse' });
export type ShiftCloseResponse = z.infer<typeof shiftCloseResponse>;
