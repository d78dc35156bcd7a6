/**
 * The External API (section 4 of the interface): requests as integrators send them, with every
 * spelling the interface shows accepted on input, and responses with exactly the table spellings.
 * Request schemas transform to one canonical command object (the server never sees aliases).
 */
import { z } from 'zod';
import {
  amount,
  canonicalCurrency,
  civilDate,
  currencyAsSent,
  currencyInput,
  errorObject,
  FREQUENCIES,
  guid,
  isGuid,
  LIMITS,
  NO_NUL,
  NO_NUL_MESSAGE,
  optNameText,
  optText,
  orgFrom,
  paymentMethodInput,
  pickAlias,
  str,
  text,
  toMinorUnits,
  utcDateTime,
} from './common.ts';

const positiveInt = () =>
  z
    .number()
    .int('must be a whole number')
    .positive('must be greater than 0')
    .max(2 ** 31 - 1);
const nonNegativeInt = () =>
  z
    .number()
    .int('must be a whole number')
    .min(0, 'must be 0 or more')
    .max(2 ** 31 - 1);
const list = <T extends z.ZodType>(item: T) =>
  z.array(item).max(LIMITS.arrayItems, `must have at most ${LIMITS.arrayItems} items`);

// ---------------------------------------------------------------------------------------------
// Charge (2.1 → 2.2)

export const chargeDonor = z
  .strictObject({
    accountNum: optText(),
    donorId: optText().meta({
      description: 'Alias of accountNum (the spelling of SaveDonor and the webhooks).',
    }),
    donorID: optText().meta({ description: 'Alias of accountNum.' }),
    firstName: optNameText(),
    lastName: optNameText(),
    phoneNumber: optText(),
    email: optText().meta({
      description: 'Extension: donor e-mail, used when the charge creates the donor.',
    }),
    firstNameHebrew: optNameText().meta({ description: 'Extension: Hebrew first name.' }),
    lastNameHebrew: optNameText().meta({ description: 'Extension: Hebrew last name.' }),
  })
  .transform(({ donorId, donorID, ...v }, ctx) => {
    const id = pickAlias(
      ctx,
      { name: 'donorId', value: donorId ?? undefined },
      { name: 'donorID', value: donorID ?? undefined },
    );
    const accountNum =
      pickAlias(
        ctx,
        { name: 'accountNum', value: v.accountNum ?? undefined },
        { name: 'donorId', value: id },
      ) ?? null;
    return { ...v, accountNum };
  })
  .meta({
    description:
      'Donor of the payment: linked by accountNum (or donorId/donorID), otherwise matched by name and phone, or created.',
  });

/** `campaignNumber` (the spelling of SaveCampaign and the webhooks) is accepted for `campaignNum`. */
export const campaignRef = z
  .strictObject({
    campaignNum: positiveInt().nullish(),
    campaignNumber: positiveInt().nullish().meta({ description: 'Alias of campaignNum.' }),
    campaignName: optNameText(),
  })
  .transform(({ campaignNumber, ...v }, ctx) => ({
    ...v,
    campaignNum:
      pickAlias(
        ctx,
        { name: 'campaignNum', value: v.campaignNum ?? undefined },
        { name: 'campaignNumber', value: campaignNumber ?? undefined },
      ) ?? null,
  }));

/** `reasonNumber` (the spelling of SaveReason and the webhooks) is accepted for `reasonNum`. */
const reasonNumAlias = <T extends { reasonNum?: number | null | undefined }>(
  { reasonNumber, ...v }: T & { reasonNumber?: number | null | undefined },
  ctx: z.RefinementCtx,
) => ({
  ...v,
  reasonNum:
    pickAlias(
      ctx,
      { name: 'reasonNum', value: v.reasonNum ?? undefined },
      { name: 'reasonNumber', value: reasonNumber ?? undefined },
    ) ?? null,
});
export const reasonRef = z
  .strictObject({
    reasonNum: positiveInt().nullish(),
    reasonNumber: positiveInt().nullish().meta({ description: 'Alias of reasonNum.' }),
    reasonName: optNameText(),
  })
  .transform(reasonNumAlias);
export const reasonPart = z
  .strictObject({
    reasonAmount: amount(),
    reasonName: optNameText(),
    reasonNum: positiveInt().nullish(),
    reasonNumber: positiveInt().nullish().meta({ description: 'Alias of reasonNum.' }),
  })
  .transform(reasonNumAlias);

export const cardInput = z.strictObject({
  ccNum: str(80)
    .nullish()
    .meta({ description: 'Card number; for the provider methods the charity card number or token.' }),
  expiry: str(10).nullish().meta({ description: 'MM/YY' }),
  cvv: str(8).nullish(),
  cardHolderName: optNameText().meta({ description: 'Extension: name on the card.' }),
});

export const bankAccountInput = z.strictObject({
  accountNum: optText(),
  accountType: optText(),
  checkType: optText(),
  nameOnAccount: optNameText(),
  routingNum: optText(),
});

export const locationInput = z.strictObject({
  locationName: optNameText(),
  longitude: z.union([str(32), z.number()]).nullish(),
  latitude: z.union([str(32), z.number()]).nullish(),
});

/** Extension for charges taken on a device: shown in the payment webhook. */
export const deviceInfoInput = z
  .strictObject({
    deviceName: optNameText(),
    timezone: optText(),
    deviceCreatedDate: utcDateTime().nullish(),
    location: locationInput.nullish(),
  })
  .meta({ description: 'Extension: the device the payment was taken on (for webhooks).' });

const paymentFields = {
  orgGUID: guid().optional(),
  orgGuid: guid().optional().meta({ description: 'Alias of orgGUID.' }),
  note: str(LIMITS.note).nullish(),
  paymentMethodId: paymentMethodInput(),
  currency: currencyInput(),
  donor: chargeDonor.nullish(),
  campaign: campaignRef.nullish(),
  reason: reasonRef.nullish(),
  reasons: list(reasonPart).nullish(),
  card: cardInput.nullish(),
  bankAccount: bankAccountInput.nullish(),
  collectorId: optText().meta({
    description: 'Extension: collector account number to attribute the payment to.',
  }),
  collectorID: optText().meta({ description: 'Alias of collectorId.' }),
  isAnonymousDonation: z
    .boolean()
    .nullish()
    .meta({ description: 'Extension: the donor asked to stay anonymous.' }),
  deviceInfo: deviceInfoInput.nullish(),
};

/** ACH needs `bankAccount`; every other method needs `card.ccNum`. */
function requireInstrument(
  v: { paymentMethodId: string; card?: { ccNum?: string | null } | null; bankAccount?: unknown },
  ctx: z.RefinementCtx,
): void {
  if (v.paymentMethodId === 'ACH') {
    if (!v.bankAccount)
      ctx.addIssue({ code: 'custom', path: ['bankAccount'], message: 'is required when paying by ACH' });
  } else if (!v.card?.ccNum) {
    ctx.addIssue({
      code: 'custom',
      path: ['card', 'ccNum'],
      message: `is required when paying by ${v.paymentMethodId}`,
    });
  }
}

type PaymentFieldsOut = z.output<z.ZodObject<typeof paymentFields>>;

function canonicalPayment(v: PaymentFieldsOut, ctx: z.RefinementCtx) {
  const orgGuid = orgFrom(ctx, v, 'orgGUID');
  const collectorId =
    pickAlias(
      ctx,
      { name: 'collectorId', value: v.collectorId ?? undefined },
      { name: 'collectorID', value: v.collectorID ?? undefined },
    ) ?? null;
  if (v.reason && v.reasons && v.reasons.length > 0) {
    ctx.addIssue({ code: 'custom', path: ['reasons'], message: 'send either reason or reasons, not both' });
  }
  const method = v.paymentMethodId;
  requireInstrument(v, ctx);
  return {
    orgGuid,
    note: v.note ?? null,
    paymentMethodId: method,
    currency: v.currency,
    donor: v.donor ?? null,
    campaign: v.campaign ?? null,
    reason: v.reason ?? null,
    reasons: v.reasons && v.reasons.length > 0 ? v.reasons : null,
    card: v.card ?? null,
    bankAccount: v.bankAccount ?? null,
    collectorId,
    isAnonymousDonation: v.isAnonymousDonation ?? null,
    deviceInfo: v.deviceInfo ?? null,
  };
}

function checkReasonSplit(
  reasons: { reasonAmount: number }[] | null,
  totalMinor: number,
  ctx: z.RefinementCtx,
) {
  if (!reasons) return;
  const sum = reasons.reduce((s, r) => s + toMinorUnits(r.reasonAmount), 0);
  if (sum !== totalMinor) {
    ctx.addIssue({
      code: 'custom',
      path: ['reasons'],
      message: `reason amounts add up to ${(sum / 100).toFixed(2)} but the amount is ${(totalMinor / 100).toFixed(2)}`,
    });
  }
}

/**
 * Fields of a command that say how to answer, not what to do: left out of the idempotency request
 * hash, so spelling variants of one request replay its first answer.
 */
export const ANSWER_ONLY_FIELDS = ['answerCurrency'] as const;

export const chargeRequest = z
  .strictObject({
    ...paymentFields,
    // As sent: `CA` is kept for the answer and stored as `CAD`.
    currency: currencyAsSent(),
    amount: amount(),
    paymentDate: utcDateTime().nullish(),
    uniqueTransactionId: str(LIMITS.string).min(1, 'is required'),
  })
  .transform(({ currency: currencyAsSent, ...v }, ctx) => {
    const base = canonicalPayment({ ...v, currency: canonicalCurrency(currencyAsSent) }, ctx);
    checkReasonSplit(base.reasons, toMinorUnits(v.amount), ctx);
    return {
      ...base,
      amount: v.amount,
      paymentDate: v.paymentDate ?? null,
      uniqueTransactionId: v.uniqueTransactionId,
      // The Charge answer echoes the currency as the request spelled it (`CA` in the charge's list).
      answerCurrency: currencyAsSent,
    };
  })
  .meta({ id: 'ChargeRequest' });
export type ChargeRequestInput = z.input<typeof chargeRequest>;
export type ChargeCommand = z.output<typeof chargeRequest>;

export const CHARGE_STATUSES = ['Success', 'Declined', 'Error'] as const;
export type ChargeStatus = (typeof CHARGE_STATUSES)[number];

export const chargeResponse = z
  .object({
    receiptNum: z.string().nullable(),
    amount: z.number(),
    accountNum: z.string().nullable(),
    currency: z.string(),
    paymentStatus: z.enum(CHARGE_STATUSES),
    responseTitle: z.string(),
    error: errorObject,
  })
  .meta({ id: 'ChargeResponse' });
export type ChargeResponse = z.infer<typeof chargeResponse>;

// ---------------------------------------------------------------------------------------------
// SchedulePayment (2.3 → 2.4)

export const SPECIAL_DAY_PRESETS = [
  'erev_shabbat',
  'rosh_chodesh',
  'erev_rosh_chodesh',
  'fast_days',
  'chanukah',
  'purim',
] as const;

export const scheduleDetails = z.strictObject({
  amountPerPayment: amount().nullish(),
  firstPaymentAmount: amount().nullish(),
  frequencyID: z.enum(FREQUENCIES, { error: `must be one of ${FREQUENCIES.join(', ')}` }),
  startDate: civilDate(),
  totalPaymentsCount: z
    .number()
    .int('must be a whole number')
    .min(1, 'must be at least 1')
    .max(1000)
    .nullish(),
  specialDays: z
    .strictObject({
      presets: list(z.enum(SPECIAL_DAY_PRESETS)).nullish(),
      dates: z.array(civilDate()).max(400).nullish(),
    })
    .nullish()
    .meta({ description: 'Extension: for Special_Days, named presets and/or explicit dates.' }),
  anniversaryRule: z
    .enum(['anniversary', 'yahrzeit'])
    .nullish()
    .meta({ description: 'Extension: Annually_Hebrew rule (default anniversary).' }),
});

export interface ScheduleAmounts {
  totalMinor: number;
  firstMinor: number;
  perPaymentMinor: number;
  count: number;
}

/**
 * Derive and check the schedule's amounts (decisions: total = first + per × (count − 1)).
 * Missing values are derived; inconsistent or underivable ones are reported on `ctx`.
 */
export function deriveScheduleAmounts(
  totalMajor: number | null | undefined,
  d: {
    amountPerPayment?: number | null;
    firstPaymentAmount?: number | null;
    totalPaymentsCount?: number | null;
  },
  ctx: z.RefinementCtx,
): ScheduleAmounts | null {
  let total = totalMajor != null ? toMinorUnits(totalMajor) : null;
  let per = d.amountPerPayment != null ? toMinorUnits(d.amountPerPayment) : null;
  let first = d.firstPaymentAmount != null ? toMinorUnits(d.firstPaymentAmount) : null;
  let count = d.totalPaymentsCount ?? null;
  const fail = (path: (string | number)[], message: string) => {
    ctx.addIssue({ code: 'custom', path, message });
    return null;
  };
  if (count === null) {
    if (total !== null && per !== null) {
      const f = first ?? per;
      const rest = total - f;
      if (rest < 0 || rest % per !== 0) {
        return fail(
          ['scheduleDetails', 'totalPaymentsCount'],
          'is required (cannot be derived from the amounts)',
        );
      }
      count = rest / per + 1;
      first = f;
    } else {
      return fail(['scheduleDetails', 'totalPaymentsCount'], 'is required');
    }
  }
  if (per === null && first === null && total === null) {
    return fail(['scheduleDetails', 'amountPerPayment'], 'is required (or amount, or firstPaymentAmount)');
  }
  if (count === 1) {
    const only = first ?? total ?? per!;
    if ((first !== null && first !== only) || (total !== null && total !== only)) {
      return fail(['amount'], 'must equal firstPaymentAmount when totalPaymentsCount is 1');
    }
    return { totalMinor: only, firstMinor: only, perPaymentMinor: per ?? only, count };
  }
  if (per === null) {
    if (total === null) {
      per = first!;
    } else if (first !== null) {
      const rest = total - first;
      if (rest <= 0 || rest % (count - 1) !== 0) {
        return fail(
          ['scheduleDetails', 'amountPerPayment'],
          'cannot be derived: (amount − firstPaymentAmount) must split evenly',
        );
      }
      per = rest / (count - 1);
    } else {
      per = Math.floor(total / count);
      if (per <= 0) return fail(['amount'], `is too small to split into ${count} payments`);
      first = total - per * (count - 1);
    }
  }
  if (first === null) first = total !== null ? total - per * (count - 1) : per;
  if (first <= 0) return fail(['scheduleDetails', 'firstPaymentAmount'], 'must be greater than 0');
  const expected = first + per * (count - 1);
  if (total === null) total = expected;
  if (total !== expected) {
    return fail(
      ['amount'],
      `must equal firstPaymentAmount + amountPerPayment × (totalPaymentsCount − 1) = ${(expected / 100).toFixed(2)}`,
    );
  }
  if (total > toMinorUnits(LIMITS.maxAmount) * 1000) return fail(['amount'], 'is too large');
  return { totalMinor: total, firstMinor: first, perPaymentMinor: per, count };
}

/** The terms of a schedule (shared by SchedulePayment and SchedulePreview). */
function scheduleTerms(
  total: number | null | undefined,
  sd: z.output<typeof scheduleDetails>,
  ctx: z.RefinementCtx,
) {
  const amounts = deriveScheduleAmounts(total, sd, ctx);
  if (
    sd.frequencyID === 'Special_Days' &&
    !sd.specialDays?.presets?.length &&
    !sd.specialDays?.dates?.length
  ) {
    ctx.addIssue({
      code: 'custom',
      path: ['scheduleDetails', 'specialDays'],
      message: 'is required for Special_Days: give presets and/or dates',
    });
  }
  return {
    amounts: amounts ?? { totalMinor: 0, firstMinor: 0, perPaymentMinor: 0, count: 0 },
    frequency: sd.frequencyID,
    startDate: sd.startDate,
    specialDays: { presets: sd.specialDays?.presets ?? [], dates: sd.specialDays?.dates ?? [] },
    anniversaryRule: sd.anniversaryRule ?? 'anniversary',
  };
}
export type ScheduleTermsCommand = ReturnType<typeof scheduleTerms>;

export const scheduleRequest = z
  .strictObject({
    ...paymentFields,
    amount: amount().nullish().meta({ description: 'Total of the schedule, including the first payment.' }),
    paymentDate: utcDateTime().nullish(),
    uniqueTransactionId: z.string().refine(isGuid, 'must be a GUID'),
    scheduleDetails,
  })
  .transform((v, ctx) => {
    const base = canonicalPayment(v, ctx);
    const terms = scheduleTerms(v.amount, v.scheduleDetails, ctx);
    // Only once the amounts are known: a missing count must not also be reported as a bad split.
    if (terms.amounts.count > 0) checkReasonSplit(base.reasons, terms.amounts.firstMinor, ctx);
    return {
      ...base,
      ...terms,
      paymentDate: v.paymentDate ?? null,
      uniqueTransactionId: v.uniqueTransactionId.toLowerCase(),
    };
  })
  .meta({ id: 'SchedulePaymentRequest' });
export type ScheduleRequestInput = z.input<typeof scheduleRequest>;
export type ScheduleCommand = z.output<typeof scheduleRequest>;

/** SchedulePreview: the SchedulePayment body without payment data; nothing is stored or charged. */
/** The SchedulePayment fields a preview accepts and ignores (it takes the whole SchedulePayment body). */
const IGNORED_BY_PREVIEW = [
  'note',
  'paymentMethodId',
  'donor',
  'campaign',
  'reason',
  'reasons',
  'card',
  'bankAccount',
  'collectorId',
  'collectorID',
  'isAnonymousDonation',
  'deviceInfo',
  'paymentDate',
  'uniqueTransactionId',
] as const;

export const schedulePreviewRequest = z
  .strictObject({
    ...Object.fromEntries(
      IGNORED_BY_PREVIEW.map((k) => [
        k,
        z.unknown().optional().meta({ description: 'SchedulePayment field: accepted and ignored.' }),
      ]),
    ),
    orgGUID: guid().optional(),
    orgGuid: guid().optional().meta({ description: 'Alias of orgGUID.' }),
    amount: amount().nullish().meta({ description: 'Total of the schedule, including the first payment.' }),
    currency: currencyInput().nullish(),
    scheduleDetails,
  })
  .transform((v, ctx) => {
    const orgGuid = orgFrom(ctx, v, 'orgGUID');
    return {
      orgGuid,
      currency: v.currency ?? null,
      ...scheduleTerms(v.amount, v.scheduleDetails, ctx),
    };
  })
  .meta({ id: 'SchedulePreviewRequest' });
export type SchedulePreviewCommand = z.output<typeof schedulePreviewRequest>;

export const schedulePreviewResponse = z
  .object({
    instalments: z.array(
      z.object({
        sequence: z.number().int(),
        dueDate: z.string().meta({ description: 'YYYY-MM-DD, after any Shabbat/Yom Tov move' }),
        hebrewDate: z.string(),
        hebrewDateHebrew: z.string().meta({ description: 'Extension: the Hebrew date in Hebrew letters' }),
        amount: z.number(),
      }),
    ),
    total: z.number(),
  })
  .meta({ id: 'SchedulePreviewResponse' });
export type SchedulePreviewResponse = z.infer<typeof schedulePreviewResponse>;

export const scheduleResponse = z
  .object({
    scheduleNum: z.number().int().nullable(),
    scheduleTotal: z.number().nullable(),
    receiptNum: z.string().nullable(),
    amount: z.number().nullable(),
    accountId: z.number().int().nullable().meta({ description: 'Numeric part of the donor account number.' }),
    accountNum: z.string().nullable(),
    currency: z.string(),
    paymentStatus: z.enum(['Success', 'Failed']),
    responseTitle: z.string(),
    error: errorObject,
  })
  .meta({ id: 'SchedulePaymentResponse' });
export type ScheduleResponse = z.infer<typeof scheduleResponse>;

// ---------------------------------------------------------------------------------------------
// VoidPayment (decisions)

export const voidRequest = z
  .strictObject({
    orgGUID: guid().optional(),
    orgGuid: guid().optional(),
    receiptNum: text().refine((r) => r.trim() !== '', 'is required'),
    reason: str(LIMITS.note).nullish(),
  })
  .transform((v, ctx) => {
    const orgGuid = orgFrom(ctx, v, 'orgGUID');
    return { orgGuid, receiptNum: v.receiptNum, reason: v.reason ?? null };
  })
  .meta({ id: 'VoidPaymentRequest' });
export type VoidCommand = z.output<typeof voidRequest>;

export const voidResponse = z
  .object({ receiptNum: z.string(), paymentStatus: z.literal('Voided'), error: errorObject })
  .meta({ id: 'VoidPaymentResponse' });
export type VoidResponse = z.infer<typeof voidResponse>;

// ---------------------------------------------------------------------------------------------
// RefundPayment (extension: refunds after settlement)

export const refundRequest = z
  .strictObject({
    orgGUID: guid().optional(),
    orgGuid: guid().optional(),
    receiptNum: text().refine((r) => r.trim() !== '', 'is required'),
    amount: amount()
      .nullish()
      .meta({ description: 'Major units to refund (≤ 2 decimals, > 0); absent: everything that remains.' }),
    reason: str(LIMITS.note)
      .refine((r) => r.trim() !== '', 'is required')
      .meta({ description: 'Why the money is returned (kept with the refund, shown on the payment).' }),
    uniqueTransactionId: str(LIMITS.string).min(1, 'is required').meta({
      description:
        'Identifies this refund (unique per organisation forever, like a Charge’s): the same request again replays its answer and refunds nothing more.',
    }),
  })
  .transform((v, ctx) => {
    const orgGuid = orgFrom(ctx, v, 'orgGUID');
    return {
      orgGuid,
      receiptNum: v.receiptNum,
      amount: v.amount ?? null,
      reason: v.reason,
      uniqueTransactionId: v.uniqueTransactionId,
    };
  })
  .meta({ id: 'RefundPaymentRequest' });
export type RefundRequestInput = z.input<typeof refundRequest>;
export type RefundCommand = z.output<typeof refundRequest>;

export const REFUND_STATUSES = ['Succeeded', 'Failed', 'Pending'] as const;

export const refundResponse = z
  .object({
    receiptNum: z.string(),
    paymentStatus: z.enum(['Success', 'PartiallyRefunded', 'Refunded']).meta({
      description: 'The payment’s status after this refund (unchanged when the refund failed or is pending).',
    }),
    refundId: z
      .number()
      .int()
      .meta({ description: 'This refund’s number (on the payment detail’s refunds).' }),
    refundStatus: z.enum(REFUND_STATUSES),
    refundAmount: z.number().meta({ description: 'This refund, in major units.' }),
    refundedAmount: z
      .number()
      .meta({ description: 'Refunded so far in all (this refund included when it succeeded).' }),
    remainingAmount: z.number().meta({ description: 'What may still be refunded.' }),
    currency: z.string(),
    error: errorObject,
  })
  .meta({ id: 'RefundPaymentResponse' });
export type RefundResponse = z.infer<typeof refundResponse>;

// ---------------------------------------------------------------------------------------------
// SaveDonor / SaveCollector (2.5)

const phone = z.strictObject({ phoneLabel: optText(), phoneNumber: optText(), countryCode: optText() });
const email = z.strictObject({
  emailLabel: optText(),
  emailAddress: z
    .union([
      z.literal(''),
      z.email('must be an e-mail address').max(LIMITS.string).refine(NO_NUL, NO_NUL_MESSAGE),
    ])
    .nullish(),
});
const address = z.strictObject({
  addressLabel: optText(),
  careOf: optText(),
  houseNum: optText(),
  streetName: optText(),
  unit: optText(),
  city: optText(),
  state: optText(),
  zip: optText(),
  country: optText(),
});
export type Phone = z.infer<typeof phone>;
export type Email = z.infer<typeof email>;
export type Address = z.infer<typeof address>;

const personNameFields = {
  title: optNameText(),
  firstName: optNameText(),
  lastName: optNameText(),
  titleHebrew: optNameText(),
  firstNameHebrew: optNameText(),
  lastNameHebrew: optNameText(),
  suffixHebrew: optNameText(),
};

/** The fields of a person record (donor or collector), each `undefined` = not sent, `null` = sent as null. */
export interface PersonPatch {
  orgGuid: string;
  id: string;
  title?: string | null;
  firstName?: string | null;
  lastName?: string | null;
  titleHebrew?: string | null;
  firstNameHebrew?: string | null;
  lastNameHebrew?: string | null;
  suffixHebrew?: string | null;
  phones?: Phone[] | null;
  emails?: Email[] | null;
  addresses?: Address[] | null;
}

function personRequest<K extends 'donor' | 'collector'>(kind: K) {
  const idA = kind === 'donor' ? 'donorID' : 'collectorID';
  const idB = kind === 'donor' ? 'donorId' : 'collectorId';
  return z
    .strictObject({
      orgGuid: guid().optional(),
      orgGUID: guid().optional(),
      [idA]: str(32).optional(),
      [idB]: str(32).optional(),
      ...personNameFields,
      [`${kind}Phones`]: list(phone).nullish(),
      [`${kind}Emails`]: list(email).nullish(),
      [`${kind}Addresses`]: list(address).nullish(),
    } as Record<string, z.ZodType>)
    .transform((raw, ctx): PersonPatch => {
      const v = raw as Record<string, unknown>;
      const orgGuid = orgFrom(ctx, v as { orgGuid?: string; orgGUID?: string }, 'orgGuid');
      const id = pickAlias(
        ctx,
        { name: idA, value: v[idA] as string | undefined },
        { name: idB, value: v[idB] as string | undefined },
      );
      if (id === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [idA],
          message: 'is required (an empty string creates a new record)',
        });
      }
      const patch: PersonPatch = { orgGuid, id: (id ?? '').trim() };
      for (const k of Object.keys(personNameFields) as (keyof typeof personNameFields)[]) {
        if (k in v) patch[k] = v[k] as string | null | undefined;
      }
      if (`${kind}Phones` in v) patch.phones = v[`${kind}Phones`] as Phone[] | null | undefined;
      if (`${kind}Emails` in v) patch.emails = v[`${kind}Emails`] as Email[] | null | undefined;
      if (`${kind}Addresses` in v) patch.addresses = v[`${kind}Addresses`] as Address[] | null | undefined;
      return patch;
    });
}

export const saveDonorRequest = personRequest('donor').meta({ id: 'SaveDonorRequest' });
export const saveCollectorRequest = personRequest('collector').meta({ id: 'SaveCollectorRequest' });

const personOut = {
  orgGuid: z.string(),
  title: z.string().nullable(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  titleHebrew: z.string().nullable(),
  firstNameHebrew: z.string().nullable(),
  lastNameHebrew: z.string().nullable(),
  suffixHebrew: z.string().nullable(),
};
export const donorRecord = z
  .object({
    ...personOut,
    donorId: z.string(),
    donorPhones: z.array(phone),
    donorEmails: z.array(email),
    donorAddresses: z.array(address),
  })
  .meta({ id: 'Donor' });
export type DonorRecord = z.infer<typeof donorRecord>;
export const collectorRecord = z
  .object({
    ...personOut,
    collectorId: z.string(),
    collectorPhones: z.array(phone),
    collectorEmails: z.array(email),
    collectorAddresses: z.array(address),
  })
  .meta({ id: 'Collector' });
export type CollectorRecord = z.infer<typeof collectorRecord>;

// ---------------------------------------------------------------------------------------------
// SaveReason / SaveCampaign (2.6)

export const saveReasonRequest = z
  .strictObject({
    orgGuid: guid().optional(),
    orgGUID: guid().optional(),
    reasonNumber: nonNegativeInt(),
    reasonName: optNameText(),
    reasonNameHebrew: optNameText(),
    homePhoneNumber: optText(),
    cellPhoneNum: optText(),
    email: z
      .union([
        z.literal(''),
        z.email('must be an e-mail address').max(LIMITS.string).refine(NO_NUL, NO_NUL_MESSAGE),
      ])
      .nullish(),
    campaignNum: nonNegativeInt().nullish(),
  })
  .transform((v, ctx) => {
    // A name is required of the saved reason, not of every update (checked after the merge).
    const orgGuid = orgFrom(ctx, v, 'orgGuid');
    const { orgGUID: _a, orgGuid: _b, ...rest } = v;
    return { ...rest, orgGuid };
  })
  .meta({ id: 'SaveReasonRequest' });
export type SaveReasonCommand = z.output<typeof saveReasonRequest>;

export const reasonRecord = z
  .object({
    orgGuid: z.string(),
    reasonNumber: z.number().int(),
    reasonName: z.string().nullable(),
    reasonNameHebrew: z.string().nullable(),
    homePhoneNumber: z.string().nullable(),
    cellPhoneNum: z.string().nullable(),
    email: z.string().nullable(),
    campaignNum: z.number().int().nullable(),
  })
  .meta({ id: 'Reason' });
export type ReasonRecord = z.infer<typeof reasonRecord>;

export const saveCampaignRequest = z
  .strictObject({
    orgGuid: guid().optional(),
    orgGUID: guid().optional(),
    campaignNumber: nonNegativeInt(),
    campaignName: optNameText(),
    campaignFriendlyName: optNameText(),
  })
  .transform((v, ctx) => {
    // A name is required of the saved campaign, not of every update (checked after the merge).
    const orgGuid = orgFrom(ctx, v, 'orgGuid');
    return {
      orgGuid,
      campaignNumber: v.campaignNumber,
      campaignName: v.campaignName,
      campaignFriendlyName: v.campaignFriendlyName,
    };
  })
  .meta({ id: 'SaveCampaignRequest' });
export type SaveCampaignCommand = z.output<typeof saveCampaignRequest>;

export const campaignRecord = z
  .object({
    orgGuid: z.string(),
    campaignNumber: z.number().int(),
    campaignName: z.string().nullable(),
    campaignFriendlyName: z.string().nullable(),
  })
  .meta({ id: 'Campaign' });
export type CampaignRecord = z.infer<typeof campaignRecord>;

// ---------------------------------------------------------------------------------------------
// Schedule management (extensions): list, cancel, pause, resume, change the payment method

export const scheduleSummary = z
  .object({
    scheduleNum: z.number().int(),
    status: z.enum(['pending', 'active', 'paused', 'completed', 'cancelled', 'failed']).meta({
      description:
        'pending: the first payment is being confirmed with the gateway (its outcome is not known yet)',
    }),
    handlingMode: z.string(),
    frequency: z.string(),
    startDate: z.string(),
    totalPaymentsCount: z.number().int(),
    scheduleTotal: z.number(),
    firstPaymentAmount: z.number(),
    amountPerPayment: z.number(),
    currency: z.string(),
    paymentMethod: z.string(),
    brand: z.string().nullable(),
    last4Digits: z.string().nullable(),
    donorId: z.string().nullable(),
    nextPaymentDate: z
      .string()
      .nullable()
      .meta({ description: 'Next instalment (Internal and Gateway modes)' }),
    paymentsCharged: z.number().int(),
    paymentsMissed: z.number().int(),
  })
  .meta({ id: 'ScheduleSummary' });
export type ScheduleSummary = z.infer<typeof scheduleSummary>;

export const scheduleListQuery = z.strictObject({
  orgGuid: guid(),
  donorId: str(32).optional(),
  status: z.enum(['pending', 'active', 'paused', 'completed', 'cancelled', 'failed']).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

export const scheduleListResponse = z
  .object({ schedules: z.array(scheduleSummary) })
  .meta({ id: 'ScheduleList' });

const orgOnly = {
  orgGuid: guid().optional(),
  orgGUID: guid().optional(),
};
export const scheduleActionRequest = z
  .strictObject(orgOnly)
  .transform((v, ctx) => ({ orgGuid: orgFrom(ctx, v, 'orgGuid') }))
  .meta({ id: 'ScheduleActionRequest' });

export const schedulePaymentMethodRequest = z
  .strictObject({
    ...orgOnly,
    paymentMethodId: paymentMethodInput(),
    card: cardInput.nullish(),
    bankAccount: bankAccountInput.nullish(),
  })
  .transform((v, ctx) => {
    const orgGuid = orgFrom(ctx, v, 'orgGuid');
    requireInstrument(v, ctx);
    return {
      orgGuid,
      paymentMethodId: v.paymentMethodId,
      card: v.card ?? null,
      bankAccount: v.bankAccount ?? null,
    };
  })
  .meta({ id: 'SchedulePaymentMethodRequest' });
