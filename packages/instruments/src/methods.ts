import { PAYMENT_METHODS, type PaymentMethodId } from '@kupah/contracts';

/** Payment methods the terminal and backend accept (`Credit_Card` is the wire spelling). */
export { PAYMENT_METHODS };
export type PaymentMethod = PaymentMethodId;

/** The four provider-backed charity-card methods. */
export const CHARITY_PROVIDERS = [
  'Provider_1',
  'Provider_2',
  'Provider_3',
  'Provider_4',
] as const satisfies readonly PaymentMethod[];
export type CharityProvider = (typeof CHARITY_PROVIDERS)[number];

export function isPaymentMethod(value: unknown): value is PaymentMethod {
  return typeof value === 'string' && (PAYMENT_METHODS as readonly string[]).includes(value);
}

export function isCharityProvider(value: unknown): value is CharityProvider {
  return typeof value === 'string' && (CHARITY_PROVIDERS as readonly string[]).includes(value);
}

/** One problem with one input field; `field` is a dotted path such as `card.ccNum`. */
export interface FieldError {
  field: string;
  message: string;
}

export type Result<T> = { ok: true; value: T } | { ok: false; errors: FieldError[] };

/** Strips the separators people type inside numbers (spaces, tabs, dashes). */
export function stripSeparators(value: string): string {
  return value.replace(/[\s-]/g, '');
}

/** Coerces an optional text input to a trimmed string ('' for null/undefined/non-strings). */
export function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}
