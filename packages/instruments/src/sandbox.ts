import type { PaymentMethod } from './methods.ts';
import { CHARITY_PROVIDERS, isCharityProvider, isPaymentMethod, stripSeparators, text } from './methods.ts';

export type SandboxOutcome = 'Success' | 'Declined' | 'Error';

export interface SandboxInstrument {
  method: PaymentMethod;
  /** Card number, ACH account number, or charity card number / token. */
  number: string;
  outcome: SandboxOutcome;
  description: string;
  /** ACH only: a routing number to use with the account number. */
  routingNum?: string;
}

const card = (number: string, outcome: SandboxOutcome, description: string): SandboxInstrument => ({
  method: 'Credit_Card',
  number,
  outcome,
  description,
});

const ach = (routingNum: string, number: string, outcome: SandboxOutcome, description: string) =>
  ({ method: 'ACH', number, routingNum, outcome, description }) satisfies SandboxInstrument;

/** Provider_1 → 6001…, Provider_2 → 6002…, and so on; tokens are the same for every provider. */
const charityRows = CHARITY_PROVIDERS.flatMap((provider, i): SandboxInstrument[] => {
  const prefix = `600${i + 1}`;
  return [
    { method: provider, number: `${prefix}000000000001`, outcome: 'Success', description: 'Approved' },
    { method: provider, number: `${prefix}000000000002`, outcome: 'Declined', description: 'Declined' },
    { method: provider, number: `${prefix}000000000119`, outcome: 'Error', description: 'Provider error' },
    {
      method: provider,
      number: 'tok_sandbox_approved',
      outcome: 'Success',
      description: 'Token: any tok_… token succeeds unless it ends in _declined',
    },
    {
      method: provider,
      number: 'tok_sandbox_declined',
      outcome: 'Declined',
      description: 'Token ending in _declined',
    },
  ];
});

/**
 * The named sandbox instruments. Numbers that are not listed: any other valid credit card succeeds;
 * an ACH account ending in 0002 is declined and one ending in 0119 errors, any other succeeds;
 * any other charity card number of a valid form succeeds, and a `tok_…` token succeeds unless it
 * ends in `_declined`. Credit-card numbers follow the big gateways' sandboxes (Stripe's).
 */
export const SANDBOX_INSTRUMENTS: readonly SandboxInstrument[] = Object.freeze(
  [
    card('4242424242424242', 'Success', 'Visa, approved'),
    card('4111111111111111', 'Success', 'Visa, approved'),
    card('5555555555554444', 'Success', 'Mastercard, approved'),
    card('378282246310005', 'Success', 'American Express, approved (4-digit CVV)'),
    card('4000000000000002', 'Declined', 'Visa, declined'),
    card('4000000000000119', 'Error', 'Visa, processing error'),
    ach('011000015', '000123456789', 'Success', 'Checking account, approved (any valid routing number)'),
    ach('021000021', '000123456789', 'Success', 'Checking account, approved'),
    ach('021000021', '000123450002', 'Declined', 'Any account number ending in 0002 is declined'),
    ach('011000015', '000123450119', 'Error', 'Any account number ending in 0119 errors'),
    ...charityRows,
  ].map((row) => Object.freeze(row)),
);

const LISTED = new Map<string, SandboxOutcome>(
  SANDBOX_INSTRUMENTS.filter((row) => row.method !== 'ACH').map((row) => [
    `${row.method}:${row.number}`,
    row.outcome,
  ]),
);

/**
 * The deterministic outcome the sandbox gateway gives an instrument. It does not validate:
 * validate first (`validateCard`, `validateBankAccount`, `validateCharityCard`) and call this
 * with the valid instrument. Spaces and dashes in numbers are ignored.
 */
export function sandboxOutcome(
  method: PaymentMethod,
  instrument: { ccNum?: string; accountNum?: string },
): SandboxOutcome {
  if (!isPaymentMethod(method)) return 'Error';
  const source = instrument !== null && typeof instrument === 'object' ? instrument : {};
  if (method === 'ACH') {
    const account = stripSeparators(text(source.accountNum));
    if (account.endsWith('0002')) return 'Declined';
    if (account.endsWith('0119')) return 'Error';
    return 'Success';
  }
  const raw = text(source.ccNum);
  if (isCharityProvider(method) && raw.startsWith('tok_')) {
    return raw.endsWith('_declined') ? 'Declined' : 'Success';
  }
  return LISTED.get(`${method}:${stripSeparators(raw)}`) ?? 'Success';
}
