/**
 * Field checks as the cashier types: each returns an i18n key (with values) or null. The same
 * rules as the server's (`@kupah/instruments`, `@kupah/contracts`), so nothing invalid reaches
 * the outbox; `TerminalData.enqueue` checks again with the contracts' schemas.
 */
import { LIMITS } from '@kupah/contracts';
import { detectBrand, isValidAbaRouting, validateCard, validateCharityCard } from '@kupah/instruments';
import type { DonorDraft, Draft } from '../store/terminal-store.ts';

export interface FieldMessage {
  key: string;
  values?: Record<string, string | number>;
}

export type Errors = Partial<Record<string, FieldMessage>>;

const MAX_MINOR = LIMITS.maxAmount * 100;
/** The API's limit on a schedule's number of payments. */
export const MAX_PAYMENTS = 1000;

/** Major-unit text → minor units, or null when it is not a valid amount. */
export function amountMinor(text: string): number | null {
  const t = text.trim();
  if (!/^\d{1,9}(\.\d{0,2})?$/.test(t)) return null;
  const [whole = '0', fraction = ''] = t.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

export function amountError(text: string): FieldMessage | null {
  const minor = amountMinor(text);
  if (minor === null || minor <= 0) return { key: 'amount.zero' };
  if (minor > MAX_MINOR) return { key: 'amount.tooLarge' };
  return null;
}

/** Split parts and the like: any valid amount, with its own message. */
export function partAmountError(text: string): FieldMessage | null {
  if (text.trim() === '') return null;
  const minor = amountMinor(text);
  return minor === null || minor <= 0 ? { key: 'details.badPartAmount' } : null;
}

export function feeMinor(amount: number, percent: number): number {
  return Math.round((amount * percent) / 100);
}

const digitsOf = (s: string) => s.replace(/[\s-]/g, '');

/** CVV length a brand asks for (4 for American Express, 3 otherwise). */
export const cvvLength = (ccNum: string) => (detectBrand(digitsOf(ccNum)) === 'American Express' ? 4 : 3);

/** The instruments' card-number message → the message shown (never containing the number). */
function cardNumberMessage(message: string, ccNum: string): FieldMessage {
  if (message === 'is required') return { key: 'method.errors.cardRequired' };
  if (message.startsWith('must contain only')) return { key: 'method.errors.cardDigits' };
  if (message.includes('check digit')) return { key: 'method.errors.cardNumber' };
  if (message.includes('not of a recognised')) return { key: 'method.errors.cardBrand' };
  const brand = detectBrand(digitsOf(ccNum));
  return brand
    ? { key: 'method.errors.cardLengthBrand', values: { brand } }
    : { key: 'method.errors.cardLength' };
}

function expiryMessage(message: string): FieldMessage {
  if (message === 'is required') return { key: 'method.errors.expiryRequired' };
  if (message.startsWith('card expired')) return { key: 'method.errors.expiry' };
  if (message.startsWith('must be within')) return { key: 'method.errors.expiryFar' };
  return { key: 'method.errors.expiryFormat' };
}

export function paymentErrors(d: Draft, now: Date): Errors {
  const e: Errors = {};
  if (d.method === 'Credit_Card') {
    if (d.swiped) {
      if (d.swiped.errorKey) e.swipe = { key: d.swiped.errorKey };
      return e;
    }
    const r = validateCard({ ccNum: d.card.ccNum, expiry: d.card.expiry, cvv: d.card.cvv }, now);
    if (!r.ok) {
      for (const err of r.errors) {
        if (err.field === 'card.ccNum') e.ccNum = cardNumberMessage(err.message, d.card.ccNum);
        else if (err.field === 'card.expiry') e.expiry = expiryMessage(err.message);
        else if (err.field === 'card.cvv')
          e.cvv = { key: 'method.errors.cvv', values: { length: cvvLength(d.card.ccNum) } };
      }
    }
    if (d.card.holder.length > LIMITS.string) e.holder = { key: 'errors.tooLong' };
  } else if (d.method === 'ACH') {
    const routing = digitsOf(d.bank.routingNum);
    if (!/^\d{9}$/.test(routing)) e.routingNum = { key: 'method.errors.routingLength' };
    else if (!isValidAbaRouting(routing)) e.routingNum = { key: 'method.errors.routing' };
    if (!/^\d{4,17}$/.test(digitsOf(d.bank.accountNum))) e.accountNum = { key: 'method.errors.account' };
    if (d.bank.holder.length > LIMITS.string) e.bankHolder = { key: 'errors.tooLong' };
  } else {
    const r = validateCharityCard(d.method, d.charity.ccNum);
    if (!r.ok) e.charity = { key: 'method.errors.charity' };
  }
  return e;
}

/**
 * What taking a bank account at the terminal adds to its validity: the account number typed a
 * second time, the same, and the donor's agreement to the debit authorisation (NACHA requires an
 * authorisation for every ACH debit).
 */
export function achConsentErrors(d: Draft): Errors {
  const e: Errors = {};
  if (d.method !== 'ACH') return e;
  const account = digitsOf(d.bank.accountNum);
  if (account !== '' && digitsOf(d.bank.accountConfirm) !== account) {
    e.accountConfirm = { key: 'method.errors.accountConfirm' };
  }
  if (!d.bank.authorised) e.achAuthorisation = { key: 'method.errors.achAuthorisation' };
  return e;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[\d\s().-]{7,24}$/;

export function donorErrors(d: DonorDraft): Errors {
  const e: Errors = {};
  if (d.mode !== 'new') return e;
  const english = d.firstName.trim() && d.lastName.trim();
  const hebrew = d.firstNameHebrew.trim() && d.lastNameHebrew.trim();
  if (!english && !hebrew) e.name = { key: 'donor.namePair' };
  const phone = d.phone.trim();
  if (phone && (!PHONE.test(phone) || phone.replace(/\D/g, '').length < 7))
    e.phone = { key: 'donor.badPhone' };
  if (d.email.trim() && !EMAIL.test(d.email.trim())) e.email = { key: 'donor.badEmail' };
  for (const k of ['firstName', 'lastName', 'firstNameHebrew', 'lastNameHebrew', 'email'] as const) {
    if (d[k].length > LIMITS.string) e[k] = { key: 'errors.tooLong' };
  }
  return e;
}

/** The split must add up to `targetMinor` (the amount charged; a schedule's first payment). */
export function splitErrors(d: Draft, targetMinor: number): Errors {
  if (!d.split) return {};
  const sum = d.parts.reduce((s, p) => s + (amountMinor(p.amountText) ?? 0), 0);
  const bad = d.parts.some((p) => p.reasonNum === null || (amountMinor(p.amountText) ?? 0) <= 0);
  if (d.parts.length === 0 || bad) return { split: { key: 'details.splitIncomplete' } };
  return sum !== targetMinor ? { split: { key: 'details.splitMustSum' } } : {};
}

export interface ScheduleAmounts {
  count: number;
  /** Instalment 1 (smaller than the others when a total does not divide evenly). */
  firstMinor: number;
  perMinor: number;
  totalMinor: number;
}

/**
 * A schedule's amounts from what was typed: each payment is the amount charged (fee included);
 * with a number of payments, the total follows; with a total, the count follows and the first
 * payment takes the remainder (total = first + per × (count − 1), as the API requires).
 */
export function scheduleAmounts(d: Pick<Draft, 'schedule'>, perMinor: number): ScheduleAmounts | null {
  if (perMinor <= 0) return null;
  if (d.schedule.by === 'count') {
    const n = Number(d.schedule.countText);
    if (!/^\d+$/.test(d.schedule.countText.trim()) || n < 1 || n > MAX_PAYMENTS) return null;
    return { count: n, firstMinor: perMinor, perMinor, totalMinor: perMinor * n };
  }
  const total = amountMinor(d.schedule.totalText);
  if (total === null || total < perMinor) return null;
  const count = Math.ceil(total / perMinor);
  if (count > MAX_PAYMENTS) return null;
  return { count, firstMinor: total - perMinor * (count - 1), perMinor, totalMinor: total };
}

export function scheduleErrors(d: Draft, today: string, perMinor = 1): Errors {
  if (!d.recurring) return {};
  const e: Errors = {};
  if (d.schedule.by === 'count') {
    if (!scheduleAmounts(d, Math.max(perMinor, 1))) e.count = { key: 'schedule.badCount' };
  } else {
    const total = amountMinor(d.schedule.totalText);
    if (total === null || total <= 0) e.total = { key: 'schedule.badTotal' };
    else if (total < perMinor) e.total = { key: 'schedule.totalBelowPayment' };
    else if (!scheduleAmounts(d, perMinor)) e.total = { key: 'schedule.tooManyPayments' };
  }
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d.schedule.startDate) || d.schedule.startDate < today)
    e.startDate = { key: 'schedule.badStart' };
  if (
    d.schedule.frequency === 'Special_Days' &&
    d.schedule.specialPresets.length === 0 &&
    d.schedule.specialDates.length === 0
  )
    e.specialDays = { key: 'schedule.badSpecialDays' };
  return e;
}

export function noteErrors(d: Draft): Errors {
  return d.note.length > LIMITS.note ? { note: { key: 'errors.tooLong' } } : {};
}
