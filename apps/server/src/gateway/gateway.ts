/**
 * The one seam to the card networks. A real gateway is one new adapter implementing `Gateway`;
 * everything else (idempotency, storage, webhooks) stays the same.
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
  /** Machine code and text of a decline or error. */
  code: string | null;
  message: string | null;
}

export interface AuthorizeRequest {
  /** Same key → the gateway returns the first result again (no second charge). */
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

export interface Gateway {
  readonly name: string;
  /** Charge (authorise and capture) an amount. */
  authorize(req: AuthorizeRequest): Promise<GatewayResult>;
  /** Verify an instrument without charging it and return a card-on-file token. */
  tokenize(req: {
    idempotencyKey: string;
    instrument: Instrument;
    currency: Currency;
  }): Promise<GatewayResult>;
  /** Void a charge made earlier by this gateway. */
  void(req: { gatewayRef: string; idempotencyKey: string }): Promise<GatewayResult>;
  /** Hand a recurrence to the gateway (ScheduleHandlingMode `Gateway`); `gatewayRef` names it. */
  setupRecurring(req: RecurringSetupRequest): Promise<GatewayResult>;
  /**
   * The gateway's report of one charge of a recurrence it runs. A real adapter answers from the
   * gateway's own notifications (or its API); the sandbox simulates the charge when it falls due.
   */
  recurringCharge(req: {
    recurringRef: string;
    sequence: number;
    amountMinor: number;
    currency: Currency;
    idempotencyKey: string;
  }): Promise<GatewayResult>;
}

/** Chooses the gateway for a caller: a sandbox credential only ever reaches the sandbox gateway. */
export interface GatewayRegistry {
  forCaller(caller: { sandbox: boolean }): Gateway | null;
  byName(name: string): Gateway | null;
}

export function gatewayRegistry(sandbox: Gateway, production: Gateway | null): GatewayRegistry {
  return {
    forCaller: (caller) => (caller.sandbox ? sandbox : production),
    byName: (name) =>
      name === sandbox.name ? sandbox : production && name === production.name ? production : null,
  };
}
