import { z } from 'zod';

/** Limits from the product decisions. */
export const LIMITS = {
  string: 256,
  note: 2000,
  arrayItems: 20,
  maxAmount: 1_000_000,
} as const;

export const CURRENCIES = ['USD', 'ILS', 'EUR', 'GBP', 'CAD'] as const;
export type Currency = (typeof CURRENCIES)[number];

export const PAYMENT_METHODS = [
  'Credit_Card',
  'ACH',
  'Provider_1',
  'Provider_2',
  'Provider_3',
  'Provider_4',
] as const;
export type PaymentMethodId = (typeof PAYMENT_METHODS)[number];

export const FREQUENCIES = [
  'Daily',
  'Weekly',
  'Every_3rd_week',
  'Monthly',
  'Annually',
  'Monthly_Hebrew',
  'Annually_Hebrew',
  'Special_Days',
  'Yizkor',
  'Every_4th_week',
  'Every_2nd_month',
  'Every_3rd_month',
  'Every_2nd_Hebrew_month',
  'Every_3rd_Hebrew_month',
] as const;
export type Frequency = (typeof FREQUENCIES)[number];

export const SCHEDULE_HANDLING_MODES = ['Integration', 'Internal', 'Gateway'] as const;
export type ScheduleHandlingMode = (typeof SCHEDULE_HANDLING_MODES)[number];

/** No NUL characters: PostgreSQL cannot store them in text, and no person types one. */
export const NO_NUL = (s: string) => !s.includes('\u0000');
export const NO_NUL_MESSAGE = 'must not contain a NUL (U+0000) character';

/**
 * Valid Unicode: no lone UTF-16 surrogate (JSON can carry one as `\ud800`; PostgreSQL cannot store
 * it, and nothing else could show it). Refused, never silently replaced.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
export const WELL_FORMED = (s: string) => !LONE_SURROGATE.test(s);
export const WELL_FORMED_MESSAGE = 'must be valid Unicode text (it contains a lone UTF-16 surrogate)';

/** A string of at most `max` characters without NUL or lone surrogates. */
export const str = (max: number) =>
  z
    .string()
    .max(max, `must be at most ${max} characters`)
    .refine(NO_NUL, NO_NUL_MESSAGE)
    .refine(WELL_FORMED, WELL_FORMED_MESSAGE);

/** A short text field: at most 256 characters. */
export const text = () => str(LIMITS.string);
/** A short text field that may be null (null = "not sent"). */
export const optText = () => text().nullish();

/**
 * Unicode's bidirectional embedding, override and isolate controls: LRE, RLE, PDF, LRO, RLO
 * (U+202A–U+202E) and LRI, RLI, FSI, PDI (U+2066–U+2069). An override makes the characters after
 * it display in the reverse of their stored order, so a donor name such as `\u202E0001` prints as
 * `1000`, and text after it on the same line is reordered too: a receipt, a webhook consumer's
 * screen or an admin list would show something other than what was stored ("Trojan Source").
 * The marks LRM, RLM (U+200E, U+200F) and ALM (U+061C) stay allowed: they change no order of
 * letters or digits, only how a neutral character next to them is placed, and Hebrew keyboards
 * and editors insert them in ordinary names (`Cohen (כהן)`).
 */
const BIDI_CONTROL = /[\u202A-\u202E\u2066-\u2069]/;
const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/g;
export const NO_BIDI_CONTROLS = (s: string) => !BIDI_CONTROL.test(s);
export const NO_BIDI_CONTROLS_MESSAGE =
  'must not contain bidirectional embedding, override or isolate controls (U+202A–U+202E, U+2066–U+2069): they make text display in another order than it was typed';

/**
 * `s` without bidirectional embedding, override and isolate controls, for text that is shown or
 * printed but was stored before names were checked for them (receipts strip them at print).
 */
export const withoutBidiControls = (s: string): string => s.replace(BIDI_CONTROLS, '');

/**
 * A name (of a donor, collector, campaign, reason, device…): a short text field, as `text()`, that
 * must not contain bidirectional embedding, override or isolate controls. Names are printed on
 * receipts and shown in lists; refused, never silently stripped.
 */
export const nameText = () => text().refine(NO_BIDI_CONTROLS, NO_BIDI_CONTROLS_MESSAGE);
/** A name that may be null (null = "not sent"). */
export const optNameText = () => nameText().nullish();

const AMOUNT_TEXT = /^\d{1,7}(\.\d{1,2})?$/;

/**
 * A money amount on the wire: a JSON number (or a numeric string) with at most two fraction
 * digits, greater than 0 and at most 1,000,000. Converted to integer minor units by `toMinorUnits`.
 * The check is on the number's shortest decimal form, so 18.000000001 or 1e-9 is refused rather
 * than rounded: the amount charged is always exactly the amount sent.
 */
export const amount = () =>
  z
    .union([z.number(), z.string().regex(AMOUNT_TEXT, 'must be a decimal number such as 18 or 18.50')])
    .transform((v) => (typeof v === 'string' ? Number(v) : v))
    .refine((v) => Number.isFinite(v), 'must be a finite number')
    .refine((v) => v > 0, 'must be greater than 0')
    .refine((v) => v <= LIMITS.maxAmount, `must be at most ${LIMITS.maxAmount}`)
    .refine((v) => v <= 0 || AMOUNT_TEXT.test(String(v)), 'must have at most 2 decimal places');

/** Decimal amount (validated by `amount()`) to integer minor units. Exact for ≤ 2 fraction digits. */
export function toMinorUnits(major: number): number {
  return Math.round(major * 100);
}

/** Integer minor units to the decimal amount the interface shows. */
export function fromMinorUnits(minor: number): number {
  return minor / 100;
}

/** A currency as a request may spell it: `CA` is the charge request's spelling of `CAD`. */
export const currencyAsSent = () =>
  z.enum([...CURRENCIES, 'CA'], { error: `must be one of ${CURRENCIES.join(', ')} (or CA)` });
export const canonicalCurrency = (c: Currency | 'CA'): Currency => (c === 'CA' ? 'CAD' : c);

/** Currency on input: `CA` is accepted for Canadian dollars and stored as `CAD`. */
export const currencyInput = () => currencyAsSent().transform(canonicalCurrency);

/** Payment method on input: `Credit Card` (with a space) is accepted and stored as `Credit_Card`. */
export const paymentMethodInput = () =>
  z
    .enum([...PAYMENT_METHODS, 'Credit Card'], { error: `must be one of ${PAYMENT_METHODS.join(', ')}` })
    .transform((m): PaymentMethodId => (m === 'Credit Card' ? 'Credit_Card' : m));

const GUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const guid = () =>
  z.string().regex(GUID, 'must be a GUID such as 3f2b8c1e-5d4a-4c7e-9b1f-2a6d8e0c4b71');
export const isGuid = (s: string): boolean => GUID.test(s);

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Years a date may have: anything else is a typo, and PostgreSQL's range ends in 294276. */
export const MIN_YEAR = 1900;
export const MAX_YEAR = 2999;

/** True when `y-m-d` is a real calendar date within MIN_YEAR…MAX_YEAR. */
export function isRealDate(y: number, m: number, d: number): boolean {
  if (y < MIN_YEAR || y > MAX_YEAR || m < 1 || m > 12 || d < 1) return false;
  const days = new Date(Date.UTC(y, m, 0)).getUTCDate();
  return d <= days;
}

/**
 * A date (`YYYY-MM-DD`) or a date-time whose date part is taken (`YYYY-MM-DDTHH:mm[:ss[.sss]][Z|±hh:mm]`).
 * Output: the civil date `YYYY-MM-DD`.
 */
export const civilDate = () =>
  z
    .string()
    .max(40)
    .transform((s, ctx) => {
      const datePart = s.slice(0, 10);
      const rest = s.slice(10);
      const m = DATE_ONLY.exec(datePart);
      if (!m || (rest !== '' && !/^[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/.test(rest))) {
        ctx.addIssue({ code: 'custom', message: 'must be a date YYYY-MM-DD' });
        return z.NEVER;
      }
      if (!isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
        ctx.addIssue({
          code: 'custom',
          message: `${datePart} is not a real calendar date between ${MIN_YEAR} and ${MAX_YEAR}`,
        });
        return z.NEVER;
      }
      return datePart;
    });

/** A UTC date or date-time; output is an ISO-8601 UTC instant. A date alone means midnight UTC. */
export const utcDateTime = () =>
  z
    .string()
    .max(40)
    .transform((s, ctx) => {
      const m = DATE_ONLY.exec(s.slice(0, 10));
      const rest = s.slice(10);
      const okRest = rest === '' || /^[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/.test(rest);
      if (!m || !okRest || !isRealDate(Number(m[1]), Number(m[2]), Number(m[3]))) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be a UTC date or date-time, e.g. 2026-11-22T14:30:00Z',
        });
        return z.NEVER;
      }
      const hasZone = /(Z|[+-]\d{2}:?\d{2})$/.test(rest);
      const iso = rest === '' ? `${s}T00:00:00Z` : `${s.replace(' ', 'T')}${hasZone ? '' : 'Z'}`;
      const t = Date.parse(iso);
      if (Number.isNaN(t)) {
        ctx.addIssue({ code: 'custom', message: 'must be a valid UTC date-time' });
        return z.NEVER;
      }
      return new Date(t).toISOString();
    });

/** Accept one of two spellings of a field on input; report a conflict if both are sent and differ. */
export function pickAlias<T>(
  ctx: z.RefinementCtx,
  a: { name: string; value: T | undefined },
  b: { name: string; value: T | undefined },
): T | undefined {
  if (a.value !== undefined && b.value !== undefined && a.value !== b.value) {
    ctx.addIssue({ code: 'custom', path: [a.name], message: `${a.name} and ${b.name} differ; send one` });
  }
  return a.value !== undefined ? a.value : b.value;
}

/**
 * The organisation of a request, sent as `orgGUID` or `orgGuid` (the interface spells it both
 * ways); required, and the two must agree when both are sent. `primary` is the operation's own
 * spelling, named in errors.
 */
export function orgFrom(
  ctx: z.RefinementCtx,
  v: { orgGUID?: string | undefined; orgGuid?: string | undefined },
  primary: 'orgGUID' | 'orgGuid' = 'orgGUID',
): string {
  const other = primary === 'orgGUID' ? 'orgGuid' : 'orgGUID';
  const orgGuid = pickAlias(ctx, { name: primary, value: v[primary] }, { name: other, value: v[other] });
  if (orgGuid === undefined) ctx.addIssue({ code: 'custom', path: [primary], message: 'is required' });
  return orgGuid ?? '';
}

export const errorObject = z
  .object({
    errorCode: z.string().nullable(),
    message: z.string().nullable(),
  })
  .meta({ description: 'Both null when there is no error.' });
export type ErrorObject = z.infer<typeof errorObject>;

export const NO_ERROR: ErrorObject = { errorCode: null, message: null };
