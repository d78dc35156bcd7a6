/**
 * Field checks as the cashier types: each returns an i18n key (with values) or null. The same
 * rules as the server's (`@kupah/instruments`, `@kupah/contracts`), so nothing invalid reaches
 * the outbox; `TerminalData.enqueue` checks again with the contracts' schemas.
 */
import { detectBrand, isValidAbaRouting, validateCard } from '@kupah/instruments';
import type { DonorDraft, Draft } from '../store/terminal-store.ts';

export interface FieldMessage {
  key: string;
  values?: Record<string, string | number>;
}

export type Errors = Partial<Record<string, FieldMessage>>;

/** Major-unit text → minor units, or null when it is not a valid amount. */
export function amountMinor(text: string): number | null {
  if (!/^\d{1,7}(\.\d{1,2})?$/.test(text)) return null;
  const [whole = '0', fraction = ''] = text.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0'));
}

export function amountError(text: string): FieldMessage | null {
  const minor = amountMinor(text);
  if (minor === null || minor <= 0) return { key: 'amount.zero' };
  if (minor > 100_000_000) return { key: 'amount.tooLarge' };
  return null;
}

export function feeMinor(amount: number, percent: number): number {
  return Math.round((amount * percent) / 100);
}

const cvvLength = (ccNum: string) => (detectBrand(ccNum) === 'American Express' ? 4 : 3);

export function paymentErrors(d: Draft, now: Date): Errors {
  const e: Errors = {};
  if (d.method === 'Credit_Card') {
    if (d.swiped) return e;
    const r = validateCard({ ccNum: d.card.ccNum, expiry: d.card.expiry, cvv: d.card.cvv }, now);
    if (!r.ok) {
      for (const err of r.errors) {
        if (err.field.includes('ccNum')) e.ccNum = { key: 'method.errors.cardNumber' };
        else if (err.field.includes('expiry')) e.expiry = { key: 'method.errors.expiry' };
        else if (err.field.includes('cvv'))
          e.cvv = { key: 'method.errors.cvv', values: { length: cvvLength(d.card.ccNum) } };
      }
    }
  } else if (d.method === 'ACH') {
    if (!isValidAbaRouting(d.bank.routingNum.replace(/\D/g, '')))
      e.routingNum = { key: 'method.errors.routing' };
    if (!/^\d{4,17}$/.test(d.bank.accountNum.replace(/[\s-]/g, '')))
      e.accountNum = { key: 'method.errors.account' };
  } else if (d.charity.ccNum.trim().length < 4) {
    e.charity = { key: 'method.errors.charity' };
  }
  return e;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function donorErrors(d: DonorDraft): Errors {
  const e: Errors = {};
  if (d.mode !== 'new') return e;
  const english = d.firstName.trim() && d.lastName.trim();
  const hebrew = d.firstNameHebrew.trim() && d.lastNameHebrew.trim();
  if (!english && !hebrew) e.name = { key: 'donor.namePair' };
  if (d.email.trim() && !EMAIL.test(d.email.trim())) e.email = { key: 'donor.badEmail' };
  return e;
}

export function splitErrors(d: Draft, totalMinor: number): Errors {
  if (!d.split) return {};
  const sum = d.parts.reduce((s, p) => s + (amountMinor(p.amountText) ?? 0), 0);
  const bad = d.parts.some((p) => p.reasonNum === null || (amountMinor(p.amountText) ?? 0) <= 0);
  return sum !== totalMinor || bad || d.parts.length === 0 ? { split: { key: 'details.splitMustSum' } } : {};
}

export function scheduleErrors(d: Draft, today: string): Errors {
  if (!d.recurring) return {};
  const e: Errors = {};
  const n = Number(d.schedule.countText);
  if (!Number.isInteger(n) || n < 1 || n > 1000) e.count = { key: 'schedule.badCount' };
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d.schedule.startDate) || d.schedule.startDate < today)
    e.startDate = { key: 'schedule.badStart' };
  return e;
}
