/**
 * The one seam to the card networks. A real gateway is one new adapter implementing `Gateway`;
 * everything else (idempotency, storage, webhooks, recovery) stays the same.
 *
 * How a call can end, and what the payment service does with it:
 * - a `GatewayResult` (Success / Declined / Error): the gateway answered; recorded as such;
 * - `GatewayUnreachable` thrown: the request certainly never reached the gateway (connection
 *   refused, DNS failure, refused before sending): nothing can have been charged, so the claim is
 *   released and the same `uniqueTransactionId` may be tried again;
 * - anything else thrown (`GatewayOutcomeUnknown`, a timeout, a reset after sending, a 5xx, an
 *   answer that cannot be read): in doubt. The payment stays `Pending` and the recovery worker
 *   asks the gateway (`lookup`) what happened to that idempotency key.
 */
import type { Currency, PaymentMethodId } from '@kupah/contracts';
import type { CharityProvider, ValidBankAccount, ValidCard, ValidCharityCard } from '@kupah/instruments';

export type Instrument =
  | { method: 'Credit_Card'; card: ValidCard; cardHolderName: string | null }
  | { method: 'ACH'; bank: ValidBankAccount }
  | { method: CharityProvider; charity: ValidCharityCard }
  /** A card-on-file token from an earlier `tokenize` or `authorize` (recurring charges). */
  | { method: PaymentMethodId; token: string };

export type GatewayStatus = 'Success' | 'Declined' | 'Error';

export interface GatewayResult {
  status: GatewayStatus;
  /** The gateway's reference of this charge (or verification). */
  gatewayRef: string | null;
  /** Card-on-file token usable for later charges of the same instrument. */
  token: string | null;
  /** Machine code and text of a decline or error (the gateway's own code where it has one). */
  code: string | null;
  message: string | null;
  /** Brand as the gateway reports it (e.g. Sola's `xCardType`), when it does. */
  brand?: string | null;
  /** Masked card or account number as the gateway reports it (never a full number). */
  masked?: string | null;
}

/** The request certainly did not reach the gateway: nothing was charged; safe to try again. */
export class GatewayUnreachable extends Error {
  override readonly name = 'GatewayUnreachable';
}

/** The request may have reached the gateway, but its answer is not known (timeout, reset, 5xx, garbage). */
export class GatewayOutcomeUnknown extends Error {
  override readonly name = 'GatewayOutcomeUnknown';
}

/** Every call may be given a signal: the payment service aborts a call that outlives its timeout. */
export interface CallOptions {
  signal?: AbortSignal | undefined;
}

export interface AuthorizeRequest {
  /**
   * Our key of this charge, passed to the gateway (Sola: `xInvoice`, hashed to its length) and
   * asked about by `lookup`. Not every gateway de-duplicates on it (Sola refuses a repeat only
   * within its duplicate window): a charge whose answer was lost is resolved through `lookup`,
   * never by sending it again.
   */
  idempotencyKey: string;
  amountMinor: number;
  currency: Currency;
  instrument: Instrument;
}

export interface RecurringSetupRequest {
  idempotencyKey: string;
  instrument: Instrument;
  currency: Currency;
  instalments: readonly { sequence: number; dueDate: string; amountMinor: number }[];
}

export interface RefundRequest {
  /** The gateway's reference of the charge to refund (`gatewayRef` of its `authorize`). */
  gatewayRef: string;
  /** Our key of this refund (Sola: `xInvoice`, hashed), asked about by `lookup` with kind `refund`. */
  idempotencyKey: string;
  /** How much to return, in minor units (≤ what remains of the charge). */
  amountMinor: number;
  currency: Currency;
  /** How the charge was paid (card → Sola's cc:refund, ACH → check:refund). */
  method: PaymentMethodId;
}

export interface LookupRequest {
  /** The idempotency key of the `authorize` (or `tokenize`, or `refund`) call whose outcome is in doubt. */
  idempotencyKey: string;
  kind: 'authorize' | 'tokenize' | 'refund';
  amountMinor: number;
  currency: Currency;
  /** When the call was sent (a gateway's report is searched around it). */
  sentAt: Date;
}

export interface Gateway {
  readonly name: string;
  /** Charge (authorise and capture) an amount. */
  authorize(req: AuthorizeRequest, opts?: CallOptions): Promise<GatewayResult>;
  /** Verify an instrument without charging it and return a card-on-file token. */
  tokenize(
    req: { idempotencyKey: string; instrument: Instrument; currency: Currency },
    opts?: CallOptions,
  ): Promise<GatewayResult>;
  /** Void a charge made earlier by this gateway (`method`: how it was paid, e.g. ACH → Sola's check:void). */
  void(
    req: { gatewayRef: string; idempotencyKey: string; method: PaymentMethodId },
    opts?: CallOptions,
  ): Promise<GatewayResult>;
  /**
   * Return money of a settled charge made earlier by this gateway, in full or in part. Same
   * contract as `authorize`: a result, `GatewayUnreachable` (nothing refunded), or anything else
   * thrown (in doubt: recovery asks `lookup` with kind `refund`).
   */
  refund(req: RefundRequest, opts?: CallOptions): Promise<GatewayResult>;
  /** Whether `refund` can return money of a payment made with `method` (charity cards: not by Sola). */
  refunds(method: PaymentMethodId): boolean;
  /**
   * What the gateway did with an earlier `authorize`/`tokenize`/`refund` of this idempotency key whose answer
   * was lost: its result, or `null` when the gateway has no record of it (nothing was charged).
   * Throws when it cannot tell now (the gateway is down): the recovery worker asks again later.
   */
  lookup(req: LookupRequest, opts?: CallOptions): Promise<GatewayResult | null>;
  /**
   * Hand a recurrence to the gateway (ScheduleHandlingMode `Gateway`); `gatewayRef` names it.
   * Absent when the gateway does not run recurrences for us (the mode is refused for its orgs).
   */
  setupRecurring?(req: RecurringSetupRequest, opts?: CallOptions): Promise<GatewayResult>;
  /**
   * The gateway's report of one charge of a recurrence it runs. A real adapter answers from the
   * gateway's own notifications (or its API); the sandbox simulates the charge when it falls due.
   */
  recurringCharge?(
    req: {
      recurringRef: string;
      sequence: number;
      amountMinor: number;
      currency: Currency;
      idempotencyKey: string;
    },
    opts?: CallOptions,
  ): Promise<GatewayResult>;
}
