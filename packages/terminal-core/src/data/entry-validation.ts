/**
 * Checks a donation before it is queued, with the same rules the server applies (the contracts'
 * request schemas) plus the instrument checks the server's gateway would make later (card Luhn,
 * expiry and CVV, ABA routing, charity card form). A donation taken offline is charged hours
 * later: every mistake caught here is a donation that is not lost.
 */
import {
  type Currency,
  chargeRequest,
  type DeviceSettings,
  type FieldError,
  issuesToFields,
  type PaymentMethodId,
  scheduleRequest,
  toMinorUnits,
} from '@kupah/contracts';
import {
  isCharityProvider,
  validateBankAccount,
  validateCard,
  validateCharityCard,
} from '@kupah/instruments';

export interface ValidEntry {
  /** The amount charged when the item is forwarded (a schedule: its first instalment). */
  amountMinor: number;
  /** The largest single charge the item leads to (a schedule: its largest instalment). */
  largestChargeMinor: number;
  currency: Currency;
  method: PaymentMethodId;
  brand: string | null;
  last4: string | null;
  frequency: string | null;
}

export type EntryCheck = { ok: true; value: ValidEntry } | { ok: false; fields: FieldError[] };

export interface EntryCheckOptions {
  now: Date;
  settings: DeviceSettings;
  /** A swiped card carries no CVV: it is then not required (one that is given is still checked). */
  swiped?: boolean;
}

type Instrument = { brand: string | null; last4: string | null; errors: FieldError[] };

const asRecord = (v: unknown): Record<string, string | null | undefined> =>
  typeof v === 'object' && v !== null ? (v as Record<string, string | null | undefined>) : {};

/** Checks the card, bank account or charity card of the raw request (also when the schema failed). */
function checkInstrument(request: Record<string, unknown>, opts: EntryCheckOptions): Instrument {
  const method = request.paymentMethodId === 'Credit Card' ? 'Credit_Card' : request.paymentMethodId;
  if (method === 'ACH') {
    const bank = validateBankAccount(asRecord(request.bankAccount));
    return bank.ok
      ? { brand: 'ACH', last4: bank.value.last4, errors: [] }
      : { brand: null, last4: null, errors: bank.errors };
  }
  if (isCharityProvider(method)) {
    const charity = validateCharityCard(method, asRecord(request.card).ccNum);
    return charity.ok
      ? { brand: charity.value.brand, last4: charity.value.last4, errors: [] }
      : { brand: null, last4: null, errors: charity.errors };
  }
  if (method !== 'Credit_Card') return { brand: null, last4: null, errors: [] };
  const card = validateCard(asRecord(request.card), opts.now, { requireCvv: !opts.swiped });
  return card.ok
    ? { brand: card.value.brand, last4: card.value.last4, errors: [] }
    : { brand: null, last4: null, errors: card.errors };
}

/** One message per field: the instrument checks speak more precisely about card and bank fields. */
function mergeFields(first: FieldError[], second: FieldError[]): FieldError[] {
  const seen = new Set(first.map((f) => f.field));
  return [...first, ...second.filter((f) => !seen.has(f.field))];
}

/**
 * Validates a charge or schedule request as it will be sent (secrets, orgGUID and
 * uniqueTransactionId included). Field paths are dotted (`card.ccNum`, `reasons`).
 */
export function checkEntry(
  kind: 'charge' | 'schedule',
  request: Record<string, unknown>,
  opts: EntryCheckOptions,
): EntryCheck {
  const parsed = kind === 'charge' ? chargeRequest.safeParse(request) : scheduleRequest.safeParse(request);
  // Both checks always run, so that the cashier sees every problem at once.
  const instrument = checkInstrument(request, opts);
  if (!parsed.success) {
    return { ok: false, fields: mergeFields(instrument.errors, issuesToFields(parsed.error.issues)) };
  }
  const command = parsed.data;
  const fields = [...instrument.errors];
  if (!opts.settings.currencies.includes(command.currency)) {
    fields.push({
      field: 'currency',
      message: `is not enabled for ${opts.settings.orgName}: use ${opts.settings.currencies.join(', ')}`,
    });
  }
  if (fields.length > 0) return { ok: false, fields };

  let amountMinor: number;
  let largestChargeMinor: number;
  let frequency: string | null = null;
  if ('amounts' in command) {
    amountMinor = command.amounts.firstMinor;
    largestChargeMinor = Math.max(command.amounts.firstMinor, command.amounts.perPaymentMinor);
    frequency = command.frequency;
  } else {
    amountMinor = toMinorUnits(command.amount);
    largestChargeMinor = amountMinor;
  }
  return {
    ok: true,
    value: {
      amountMinor,
      largestChargeMinor,
      currency: command.currency,
      method: command.paymentMethodId,
      brand: instrument.brand,
      last4: instrument.last4,
      frequency,
    },
  };
}

/** A one-line summary of the failing fields for the refusal's message. */
export function describeFields(fields: readonly FieldError[]): string {
  const parts = fields.map((f) => `${f.field} ${f.message}`);
  return `The donation cannot be taken: ${parts.join('; ')}`;
}
