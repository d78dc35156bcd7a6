/**
 * The three outbound webhooks (section 6), with the table spellings, and a tolerant parser for
 * consumers that accepts both shapes of every quirk the interface shows.
 */
import { z } from 'zod';

const s = () => z.string();
const ns = () => z.string().nullable();

export const locationInfo = z.object({ locationName: ns(), longitude: ns(), latitude: ns() }).partial();
export const collectorInfo = z
  .object({ collectorNumber: z.number().nullable(), collectorName: ns() })
  .partial();
export const campaignInfo = z.object({ campaignNumber: z.number().nullable(), campaignName: ns() });
export const reasonInfo = z.object({ reasonNumber: z.number().nullable(), reasonName: ns() });

// 6.2 Charge payment webhook
export const paymentWebhook = z
  .object({
    orgGuid: s(),
    processedDateTime: s(),
    amount: s(),
    token: ns(),
    maskedApiKey: s(),
    gatewayName: s(),
    last4Digits: ns(),
    brand: ns(),
    paymentNumber: s(),
    gatewayRefNum: ns(),
    paymentMethod: s(),
    currency: s(),
    deviceName: ns(),
    deviceCreatedDate: ns(),
    timezone: ns(),
    cardHolderName: ns(),
    isAnonymousDonation: z.boolean(),
    paymentStatus: s(),
    donorInfo: z.object({
      donorNumber: ns(),
      newDonor: z.object({ donorID: s(), firstName: ns(), lastName: ns() }).optional(),
    }),
    campaignInfo: z.array(campaignInfo),
    reasonInfo: z.array(reasonInfo),
    collectorInfo,
    locationInfo,
  })
  .meta({ id: 'PaymentWebhook' });
export type PaymentWebhook = z.infer<typeof paymentWebhook>;

// 6.1 Schedule payment webhook
export const scheduleFirstPayment = z.object({
  processedDateTime: s(),
  amount: s(),
  maskedApiKey: s(),
  gatewayName: s(),
  brand: ns(),
  paymentNumber: s(),
  gatewayRefNum: ns(),
  paymentMethod: s(),
  deviceName: ns(),
  deviceCreatedDate: ns(),
  timezone: ns(),
  cardHolderName: ns(),
  isAnonymousDonation: z.boolean(),
});
export const scheduleWebhook = z
  .object({
    orgGuid: s(),
    scheduleUniqueID: s(),
    totalScheduleAmount: s(),
    countOfSchedules: s(),
    frequency: s(),
    scheduleStartDate: s(),
    currency: s(),
    donorInfo: z.object({
      donorNumber: ns(),
      newDonor: z.object({ DonorID: s(), FirstName: ns(), LastName: ns() }).optional(),
    }),
    campaignInfo: campaignInfo.partial(),
    reasonInfo: reasonInfo.partial(),
    collectorInfo,
    locationInfo,
    firstPayment: scheduleFirstPayment.optional(),
  })
  .meta({ id: 'ScheduleWebhook' });
export type ScheduleWebhook = z.infer<typeof scheduleWebhook>;

// 6.3 Void payment webhook
export const voidWebhook = z
  .object({
    orgGuid: s(),
    statusDateTime: s(),
    paymentNumber: s(),
    paymentStatus: z.enum(['Success', 'Voided', 'Declined', 'Error', 'Refunded', 'PartiallyRefunded']),
    // Extension, on a refund only (paymentStatus Refunded or PartiallyRefunded):
    amount: s().optional().meta({ description: 'Refunds only: the amount charged (major units, "18.00").' }),
    refundAmount: s().optional().meta({ description: 'Refunds only: this refund (major units).' }),
    refundedAmount: s()
      .optional()
      .meta({ description: 'Refunds only: refunded so far in all, this refund included (major units).' }),
    currency: s().optional().meta({ description: 'Refunds only: the payment currency.' }),
    refundReason: ns().optional().meta({ description: 'Refunds only: the reason given for the refund.' }),
  })
  .meta({ id: 'VoidWebhook' });
export type VoidWebhook = z.infer<typeof voidWebhook>;

export type WebhookKind = 'payment' | 'schedule' | 'void';

const OBJECT_FIELDS = ['collectorInfo', 'locationInfo', 'firstPayment', 'donorInfo'] as const;

/** Normalise the quirks of the interface's samples into the table shape, without judging the rest. */
function normalise(kind: WebhookKind, body: unknown): unknown {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return body;
  const o: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  const rename = (from: string, to: string) => {
    if (o[to] === undefined && o[from] !== undefined) o[to] = o[from];
    delete o[from];
  };
  rename('orgGUID', 'orgGuid');
  rename('maskedAPIKey', 'maskedApiKey');
  const unwrap = (v: unknown) => (Array.isArray(v) && v.length <= 1 ? (v[0] ?? {}) : v);
  for (const f of OBJECT_FIELDS) if (f in o) o[f] = unwrap(o[f]);
  const arrays = kind === 'payment';
  for (const f of ['campaignInfo', 'reasonInfo']) {
    if (!(f in o)) continue;
    if (arrays) {
      if (o[f] && !Array.isArray(o[f])) o[f] = [o[f]];
    } else {
      o[f] = unwrap(o[f]);
    }
  }
  const fp = o.firstPayment;
  if (fp && typeof fp === 'object' && !Array.isArray(fp)) {
    const p = { ...(fp as Record<string, unknown>) };
    if (p.maskedApiKey === undefined && p.maskedAPIKey !== undefined) p.maskedApiKey = p.maskedAPIKey;
    delete p.maskedAPIKey;
    if (p.paymentMethod === 'Credit Card') p.paymentMethod = 'Credit_Card';
    o.firstPayment = p;
  }
  if (o.paymentMethod === 'Credit Card') o.paymentMethod = 'Credit_Card';
  if (o.currency === 'CA') o.currency = 'CAD';
  return o;
}

const schemas = { payment: paymentWebhook, schedule: scheduleWebhook, void: voidWebhook } as const;
type Parsed = { payment: PaymentWebhook; schedule: ScheduleWebhook; void: VoidWebhook };

/**
 * Parse a received webhook of the given kind, accepting both shapes of every quirk:
 * an object or a one-item array, `orgGUID` or `orgGuid`, `maskedAPIKey` or `maskedApiKey`,
 * `Credit Card` or `Credit_Card`. Unknown extra fields are ignored.
 */
export function parseWebhook<K extends WebhookKind>(
  kind: K,
  body: unknown,
): { success: true; data: Parsed[K] } | { success: false; error: z.ZodError } {
  const r = schemas[kind].safeParse(normalise(kind, body));
  return r.success ? { success: true, data: r.data as Parsed[K] } : { success: false, error: r.error };
}
