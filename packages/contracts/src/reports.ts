/**
 * The read API for reporting and reconciliation (API key only; every query is scoped to the key's
 * organisation): payments with filters and a cursor, one payment with everything known about it,
 * totals grouped in SQL, donors by search and one donor with giving history.
 */
import { z } from 'zod';
import { CURRENCIES, guid, PAYMENT_METHODS, str } from './common.ts';
import { shiftCloseResponse } from './device.ts';
import { donorRecord, scheduleSummary } from './external.ts';

export const PAYMENT_STATUSES = [
  'Pending',
  'Success',
  'Declined',
  'Error',
  'Voided',
  'PartiallyRefunded',
  'Refunded',
] as const;
export type PaymentStatusName = (typeof PAYMENT_STATUSES)[number];
export const PAYMENT_SOURCES = ['device', 'external', 'apiKey'] as const;
export const TOTALS_GROUPS = [
  'day',
  'device',
  'collector',
  'campaign',
  'reason',
  'method',
  'currency',
] as const;
export type TotalsGroup = (typeof TOTALS_GROUPS)[number];

/** Page sizes: a page is at most 500 rows (the CSV export streams every row, in pages). */
export const READ_LIMITS = { defaultPage: 100, maxPage: 500, searchMax: 100, cursorMax: 200 } as const;

/**
 * A point in time for a range: a date `YYYY-MM-DD` (midnight in the organisation's time zone) or a
 * date-time with its offset (`2026-11-01T00:00:00Z`, `…+02:00`). Checked again by the server for a
 * real calendar date.
 */
const instantText = () =>
  str(40)
    .regex(
      /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2}))?$/,
      'must be a date YYYY-MM-DD or a date-time with its offset, e.g. 2026-11-01T00:00:00Z',
    )
    .meta({
      description:
        'A date (`YYYY-MM-DD`, midnight in the organisation time zone) or a date-time with its offset.',
      example: '2026-11-01',
    });

const decimalAmount = () =>
  str(12)
    .regex(/^\d{1,7}(\.\d{1,2})?$/, 'must be a decimal amount such as 18 or 18.50')
    .meta({ description: 'Major units, at most 2 decimals', example: '18.00' });

const positiveInt = () => z.coerce.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const orgParams = {
  orgGuid: guid()
    .optional()
    .meta({ description: "Optional: when sent, must be the API key's organisation (403 otherwise)" }),
  orgGUID: guid().optional().meta({ description: 'The same as orgGuid (the interface spells it both ways)' }),
};

const pageParams = {
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(READ_LIMITS.maxPage)
    .default(READ_LIMITS.defaultPage)
    .meta({ description: `Page size, 1–${READ_LIMITS.maxPage} (default ${READ_LIMITS.defaultPage})` }),
  cursor: str(READ_LIMITS.cursorMax)
    .optional()
    .meta({ description: "The previous page's nextCursor, as given (opaque)" }),
};

export const paymentListQuery = z
  .strictObject({
    ...orgParams,
    from: instantText().optional().meta({ description: 'Created at or after (inclusive)' }),
    to: instantText()
      .optional()
      .meta({ description: 'Created before: a date-time is exclusive; a date includes that whole day' }),
    status: z.enum(PAYMENT_STATUSES).optional(),
    method: z.enum(PAYMENT_METHODS).optional(),
    currency: z.enum(CURRENCIES).optional(),
    source: z
      .enum(PAYMENT_SOURCES)
      .optional()
      .meta({ description: 'device: a paired terminal; external: a source GUID; apiKey: the API key' }),
    deviceId: str(64).optional().meta({ description: 'Payments taken on this terminal (its deviceId)' }),
    collectorId: str(32).optional().meta({ description: 'Collector account number, e.g. C1001' }),
    campaignNumber: positiveInt().optional(),
    reasonNumber: positiveInt().optional(),
    donorId: str(32).optional().meta({ description: 'Donor account number, e.g. D100001' }),
    scheduleNum: positiveInt().optional(),
    minAmount: decimalAmount().optional(),
    maxAmount: decimalAmount().optional(),
    q: str(READ_LIMITS.searchMax)
      .optional()
      .meta({ description: 'Receipt number (exact) or part of the donor name (English or Hebrew)' }),
    ...pageParams,
  })
  .meta({ description: 'Filters of the payments list' });
export type PaymentListQuery = z.output<typeof paymentListQuery>;

const money = {
  amount: z.number().meta({ description: 'Major units (e.g. 18.5)' }),
  amountMinor: z.number().int().meta({ description: 'Minor units (e.g. 1850): exact' }),
};

export const paymentSummary = z
  .object({
    receiptNum: z.string(),
    status: z.enum(PAYMENT_STATUSES),
    ...money,
    currency: z.string(),
    paymentMethod: z.string(),
    createdAt: z.string().meta({ description: 'When the server recorded it (UTC)' }),
    processedAt: z.string(),
    donorId: z.string().nullable(),
    donorName: z.string().nullable(),
    collectorId: z.string().nullable(),
    collectorName: z.string().nullable(),
    campaignNumber: z.number().int().nullable(),
    reasonNumbers: z.array(z.number().int()),
    scheduleNum: z.number().int().nullable(),
    instalment: z.number().int().nullable(),
    source: z.enum(PAYMENT_SOURCES).nullable(),
    deviceId: z.string().nullable(),
    deviceName: z.string().nullable(),
    brand: z.string().nullable(),
    last4Digits: z.string().nullable(),
    voidedAt: z.string().nullable(),
    refundedAmount: z.number().meta({ description: 'Refunded so far, major units (0 when none)' }),
    refundedMinor: z.number().int().meta({ description: 'Refunded so far, minor units (exact)' }),
    errorCode: z.string().nullable(),
  })
  .meta({ id: 'PaymentSummary' });
export type PaymentSummary = z.infer<typeof paymentSummary>;

export const paymentList = z
  .object({
    payments: z.array(paymentSummary),
    nextCursor: z.string().nullable().meta({ description: 'null on the last page' }),
  })
  .meta({ id: 'PaymentList' });
export type PaymentList = z.infer<typeof paymentList>;

const party = z.object({
  accountNum: z.string(),
  firstName: z.string().nullable(),
  lastName: z.string().nullable(),
  firstNameHebrew: z.string().nullable(),
  lastNameHebrew: z.string().nullable(),
});

export const webhookDeliverySummary = z
  .object({
    eventId: z.string(),
    eventType: z.enum(['payment', 'schedule', 'void']),
    url: z.string(),
    status: z.enum(['pending', 'delivered', 'dead']),
    attempts: z.number().int(),
    lastStatusCode: z.number().int().nullable(),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    deliveredAt: z.string().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });

export const paymentDetail = z
  .object({
    ...paymentSummary.shape,
    paymentDate: z.string(),
    uniqueTransactionId: z.string().nullable(),
    note: z.string().nullable(),
    isAnonymous: z.boolean(),
    cardHolderName: z.string().nullable(),
    donor: party.nullable(),
    donorCreated: z.boolean().meta({ description: 'The donor was created by this payment' }),
    collector: party.nullable(),
    campaign: z.object({ campaignNumber: z.number().int(), campaignName: z.string().nullable() }).nullable(),
    reasons: z.array(
      z.object({
        reasonNumber: z.number().int(),
        reasonName: z.string().nullable(),
        reasonNameHebrew: z.string().nullable(),
        ...money,
      }),
    ),
    device: z
      .object({
        deviceName: z.string().nullable(),
        timezone: z.string().nullable(),
        deviceCreatedDate: z.string().nullable(),
        location: z
          .object({
            locationName: z.string().nullable(),
            longitude: z.string().nullable(),
            latitude: z.string().nullable(),
          })
          .nullable(),
      })
      .nullable(),
    gateway: z.object({
      gatewayName: z.string(),
      gatewayRefNum: z.string().nullable(),
      errorMessage: z.string().nullable(),
    }),
    voidReason: z.string().nullable(),
    refunds: z
      .array(
        z.object({
          refundId: z.number().int(),
          status: z.enum(['pending', 'succeeded', 'failed']),
          ...money,
          reason: z.string(),
          actor: z
            .string()
            .nullable()
            .meta({ description: 'Who asked: the masked API key, or a console user' }),
          gatewayRefNum: z.string().nullable(),
          errorCode: z.string().nullable(),
          errorMessage: z.string().nullable(),
          createdAt: z.string(),
          resolvedAt: z.string().nullable(),
        }),
      )
      .meta({ description: 'Every refund asked for, oldest first (failed ones too)' }),
    webhooks: z.array(webhookDeliverySummary),
  })
  .meta({ id: 'PaymentDetail' });
export type PaymentDetail = z.infer<typeof paymentDetail>;

export const totalsQuery = z.strictObject({
  ...orgParams,
  from: instantText().meta({ description: 'Created at or after (inclusive)' }),
  to: instantText().meta({
    description: 'Created before: a date-time is exclusive; a date includes that whole day',
  }),
  groupBy: z.enum(TOTALS_GROUPS),
});
export type TotalsQuery = z.output<typeof totalsQuery>;

const counted = (what: string) => ({
  count: z
    .number()
    .int()
    .meta({ description: `Payments ${what}` }),
  amount: z.number(),
  amountMinor: z.number().int(),
});

export const totalsRow = z
  .object({
    key: z.string().nullable().meta({
      description:
        'The group: a day YYYY-MM-DD, a deviceId, an account or a number, a method, a currency; null: none',
    }),
    label: z.string().nullable().meta({ description: "The group's name, when it has one" }),
    currency: z.string(),
    succeeded: z.object(counted('charged and not voided (refunded ones included: the gross amount charged)')),
    voided: z.object(counted('charged, then voided')),
    refunded: z.object(
      counted('refunded in part or in full (amount: the money refunded, which succeeded includes)'),
    ),
    net: z
      .object({ amount: z.number(), amountMinor: z.number().int() })
      .meta({ description: 'succeeded − refunded: the money kept' }),
    declined: z.object(counted('declined by the gateway')),
    failed: z.object(counted('failed with an error')),
  })
  .meta({ id: 'TotalsRow' });

export const totalsResponse = z
  .object({
    from: z.string(),
    to: z.string(),
    timezone: z.string().meta({ description: 'The organisation time zone (days are counted in it)' }),
    groupBy: z.enum(TOTALS_GROUPS),
    groups: z.array(totalsRow).meta({
      description:
        'One row per group and currency (sums are never added across currencies). By reason, a payment split over reasons counts in each, with its share.',
    }),
    totals: z.array(totalsRow).meta({ description: 'One row per currency (key null)' }),
  })
  .meta({ id: 'Totals' });
export type TotalsResponse = z.infer<typeof totalsResponse>;

export const donorSearchQuery = z.strictObject({
  ...orgParams,
  search: str(READ_LIMITS.searchMax).optional().meta({
    description:
      'Part of a name (English or Hebrew, first, last or both), a phone number (digits), an e-mail address or an account number; empty or absent: every donor',
  }),
  ...pageParams,
});

export const donorList = z
  .object({ donors: z.array(donorRecord), nextCursor: z.string().nullable() })
  .meta({ id: 'DonorList' });

export const donorDetail = z
  .object({
    donor: donorRecord,
    totalsByYear: z
      .array(
        z.object({
          year: z.number().int().meta({ description: 'Civil year in the organisation time zone' }),
          currency: z.string(),
          count: z.number().int(),
          ...money,
        }),
      )
      .meta({
        description:
          'Successful payments (voided and fully refunded ones excluded; partly refunded ones net of the refund), newest year first',
      }),
    payments: z.array(paymentSummary).meta({
      description: 'The latest 50 payments; the rest through GET /v1/External/Payments?donorId=',
    }),
    schedules: z.array(scheduleSummary),
  })
  .meta({ id: 'DonorDetail' });
export type DonorDetail = z.infer<typeof donorDetail>;

export const shiftListQuery = z.strictObject({
  ...orgParams,
  deviceId: str(64).optional(),
  from: instantText().optional().meta({ description: 'Closed at or after' }),
  to: instantText().optional().meta({ description: 'Closed before (a date includes that whole day)' }),
  limit: pageParams.limit,
});

const shiftTotalsOut = shiftCloseResponse.shape.server;

export const shiftList = z
  .object({
    shifts: z.array(
      z.object({
        closeId: z.string(),
        deviceId: z.string(),
        deviceName: z.string(),
        openedAt: z.string(),
        closedAt: z.string(),
        closedBy: z.string().nullable(),
        recordedAt: z.string(),
        device: shiftTotalsOut.meta({ description: 'As the device counted them at the close' }),
        server: shiftTotalsOut.meta({ description: "The server's, when the close was recorded" }),
      }),
    ),
  })
  .meta({ id: 'ShiftList' });
export type ShiftList = z.infer<typeof shiftList>;
