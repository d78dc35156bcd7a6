/**
 * Turn the request's card / bank account into a validated gateway instrument plus the few facts
 * we may keep (brand, last 4, expiry). The full number and CVV live only in this request's memory.
 */
import type { ChargeCommand, FieldError } from '@kupah/contracts';
import { validateBankAccount, validateCard, validateCharityCard } from '@kupah/instruments';
import type { Instrument } from '../gateway/gateway.ts';
import { validationError } from '../http/errors.ts';

export interface PreparedInstrument {
  instrument: Instrument;
  brand: string | null;
  last4: string | null;
  expiry: string | null;
  cardHolderName: string | null;
}

export function prepareInstrument(
  cmd: Pick<ChargeCommand, 'paymentMethodId' | 'card' | 'bankAccount'>,
  now: Date,
): PreparedInstrument {
  const fail = (errors: FieldError[]) => validationError(errors);
  const method = cmd.paymentMethodId;
  if (method === 'Credit_Card') {
    const r = validateCard(cmd.card ?? {}, now);
    if (!r.ok) throw fail(r.errors);
    const holder = cmd.card?.cardHolderName?.trim() || null;
    return {
      instrument: { method, card: r.value, cardHolderName: holder },
      brand: r.value.brand,
      last4: r.value.last4,
      expiry: r.value.expiry,
      cardHolderName: holder,
    };
  }
  if (method === 'ACH') {
    const r = validateBankAccount(cmd.bankAccount ?? {});
    if (!r.ok) throw fail(r.errors);
    return {
      instrument: { method, bank: r.value },
      brand: 'ACH',
      last4: r.value.last4,
      expiry: null,
      cardHolderName: r.value.nameOnAccount,
    };
  }
  const r = validateCharityCard(method, cmd.card?.ccNum);
  if (!r.ok) throw fail(r.errors);
  return {
    instrument: { method, charity: r.value },
    brand: r.value.brand,
    last4: r.value.last4,
    expiry: null,
    cardHolderName: cmd.card?.cardHolderName?.trim() || null,
  };
}
