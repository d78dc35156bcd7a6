import { z } from 'zod';

/** Machine error codes (the `errorCode` of every error body). */
export const ERROR_CODES = {
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  NOT_FOUND: 'NOT_FOUND',
  DUPLICATE_TRANSACTION: 'DUPLICATE_TRANSACTION',
  /** Another request with the same uniqueTransactionId is being processed (409, Retry-After). */
  REQUEST_IN_PROGRESS: 'REQUEST_IN_PROGRESS',
  /** The gateway's outcome is not known yet (paymentStatus Error): ask again with the same id. */
  PAYMENT_PENDING: 'PAYMENT_PENDING',
  /** The gateway could not be reached and nothing was charged: the same id may be tried again. */
  GATEWAY_UNAVAILABLE: 'GATEWAY_UNAVAILABLE',
  /** A field the operation does not know (a typo, or another operation's field): 400 naming it. */
  UNKNOWN_FIELD: 'UNKNOWN_FIELD',
  PAYLOAD_TOO_LARGE: 'PAYLOAD_TOO_LARGE',
  /** A known path asked with a method it does not answer (405, with `Allow`). */
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  /** A request body that is not `application/json` (415). */
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED: 'RATE_LIMITED',
  /** Too many declines from one credential: its charges are refused for a cool-off (429, Retry-After). */
  TOO_MANY_DECLINES: 'TOO_MANY_DECLINES',
  /** One card (or bank account) tried or declined too often across the organisation (429, Retry-After). */
  CARD_TESTING_SUSPECTED: 'CARD_TESTING_SUSPECTED',
  CURRENCY_NOT_ENABLED: 'CURRENCY_NOT_ENABLED',
  INVALID_STATE: 'INVALID_STATE',
  INTERNAL: 'INTERNAL_ERROR',
  CARD_DECLINED: 'CARD_DECLINED',
  GATEWAY_ERROR: 'GATEWAY_ERROR',
  GATEWAY_NOT_CONFIGURED: 'GATEWAY_NOT_CONFIGURED',
  // Refunds
  /** Only a Success or PartiallyRefunded payment can be refunded (a voided, declined, failed or pending one cannot): 409. */
  PAYMENT_NOT_REFUNDABLE: 'PAYMENT_NOT_REFUNDABLE',
  /** The refund is larger than what remains of the payment (charged − refunded − refunds still being confirmed): 409. */
  REFUND_EXCEEDS_REMAINING: 'REFUND_EXCEEDS_REMAINING',
  /** The payment's provider has no refund (charity cards): 409. */
  REFUND_NOT_SUPPORTED: 'REFUND_NOT_SUPPORTED',
  /** The gateway's answer to a refund was lost: it is being confirmed; send the same request later. */
  REFUND_PENDING: 'REFUND_PENDING',
  // Device sync
  DEVICE_REVOKED: 'DEVICE_REVOKED',
  PAIRING_CODE_INVALID: 'PAIRING_CODE_INVALID',
  OFFLINE_EXPIRED: 'OFFLINE_EXPIRED',
  ENVELOPE_UNKNOWN_KEY: 'ENVELOPE_UNKNOWN_KEY',
  ENVELOPE_INVALID: 'ENVELOPE_INVALID',
  /** A box sealed under the old (v1) additional data after its transition window: not charged. */
  ENVELOPE_OUTDATED: 'ENVELOPE_OUTDATED',
  /** An operation taken offline is over the organisation's offline limits: not charged. */
  OFFLINE_LIMIT_EXCEEDED: 'OFFLINE_LIMIT_EXCEEDED',
  /** The device's creation time is ahead of the server's clock (sent again later). */
  DEVICE_CLOCK_AHEAD: 'DEVICE_CLOCK_AHEAD',
  // Console (the organisation's web console, /console/api)
  /** A wrong e-mail or password (the two answer alike: no account probing). */
  INVALID_CREDENTIALS: 'INVALID_CREDENTIALS',
  /** Too many failed sign-ins for this e-mail or from this address (429, Retry-After). */
  LOCKED_OUT: 'LOCKED_OUT',
  /** A changing request without the session's X-CSRF-Token, or sent from another site (403). */
  CSRF_REFUSED: 'CSRF_REFUSED',
  /** A console user with this e-mail address already exists (409). */
  EMAIL_TAKEN: 'EMAIL_TAKEN',
} as const;
export type ErrorCode = (typeof ERROR_CODES)[keyof typeof ERROR_CODES];

export const fieldError = z.object({ field: z.string(), message: z.string() });
export type FieldError = z.infer<typeof fieldError>;

/** Body of every 4xx/5xx answer. */
export const errorResponse = z
  .object({
    error: z.object({
      errorCode: z.string(),
      message: z.string(),
      fields: z.array(fieldError).optional().meta({ description: 'Every failing field (400 only).' }),
    }),
  })
  .meta({ id: 'ErrorResponse' });
export type ErrorResponse = z.infer<typeof errorResponse>;

export const UNKNOWN_FIELD_MESSAGE = 'is not a field of this request';

/**
 * Turn zod issues into `{ field, message }` pairs with dotted paths (`card.ccNum`,
 * `reasons.1.reasonAmount`). An object's unknown keys give one pair each (`card.ccNumber`), first.
 */
export function issuesToFields(issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const unknown: FieldError[] = [];
  const others: FieldError[] = [];
  for (const i of issues) {
    const path = i.path.map(String);
    if (i.code === 'unrecognized_keys') {
      for (const key of i.keys) {
        // An empty key is shown as "" (an empty field name would name nothing).
        unknown.push({ field: [...path, key === '' ? '""' : key].join('.'), message: UNKNOWN_FIELD_MESSAGE });
      }
      continue;
    }
    let message = i.message;
    if (i.code === 'invalid_type' && (i as { input?: unknown }).input === undefined) message = 'is required';
    others.push({ field: path.join('.') || '(body)', message });
  }
  return [...unknown, ...others];
}
