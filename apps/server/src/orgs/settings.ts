export const BRAND_COLOR = z.string().regex(/^#[0-9a-fA-F]{6}$/, 'must be a colour such as #1f4e79');
/** A logo small enough to travel in the device settings and stay on the device for offline use. */
export const BRAND_LOGO = z
  .string()
  .max(48 * 1024, 'must be at most 48 KiB (a data: URL)')
  .regex(
    /^data:image\/(png|jpeg|webp|svg\+xml);base64,[A-Za-z0-9+/]+=*$/,
    'must be a data:image/png, jpeg, webp or svg+xml;base64 URL',
  );
/** Characters that would reorder or hide receipt text (bidi controls); and C0 controls but tab/newline. */
const hasControl = (s: string, newlines: boolean): boolean =>
  [...s].some((ch) => {
    const c = ch.codePointAt(0)!;
    if (c < 0x20) return !(newlines && (c === 0x0a || c === 0x0d || c === 0x09));
    return c === 0x7f || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069);
  });
/** A line of a receipt (the legal name): no control characters. */
export const RECEIPT_TEXT = z
  .string()
  .min(1)
  .max(256)
  .refine((s) => !hasControl(s, false), 'must be one line without control characters');
/** A tax statement template or an address: lines of text, `{legalName}` and `{taxId}` filled in. */
export const RECEIPT_STATEMENT = z
  .string()
  .min(1)
  .max(2000)
  .refine((s) => !hasControl(s, true), 'must be text without control characters');
export const CHARITY_PROVIDER_IDS = ['Provider_1', 'Provider_2', 'Provider_3', 'Provider_4'] as const;

import { CURRENCIES, SCHEDULE_HANDLING_MODES } from '@kupah/contracts';
import { z } from 'zod';

const ABUSE_DEFAULTS = {
  declines: 10,
  declineWindowMinutes: 10,
  coolOffMinutes: 30,
  cardAttempts: 5,
  cardDeclines: 3,
  cardWindowMinutes: 60,
  sandbox: false,
};

/** An organisation's settings, stored as JSON with defaults filled on read. */
export const orgSettings = z.object({
  scheduleMode: z.enum(SCHEDULE_HANDLING_MODES).default('Integration'),
  il: z.boolean().default(false),
  timezone: z.string().default('America/New_York'),
  shabbatShift: z.boolean().default(true),
  webhooksAllSources: z.boolean().default(false),
  rateLimit: z
    .object({ perSecond: z.number().positive().default(50), burst: z.number().positive().default(100) })
    .default({ perSecond: 50, burst: 100 }),
  /**
   * Card-testing limits (abuse/limits.ts), checked before the gateway is called. A credential with
   * `declines` declines within `declineWindowMinutes` is refused for `coolOffMinutes`; one card (or
   * bank account) is refused after `cardAttempts` attempts or `cardDeclines` declines within
   * `cardWindowMinutes`. Sandbox credentials (which only reach the sandbox) are exempt unless `sandbox`.
   */
  abuse: z
    .object({
      declines: z.number().int().positive().default(ABUSE_DEFAULTS.declines),
      declineWindowMinutes: z.number().positive().default(ABUSE_DEFAULTS.declineWindowMinutes),
      coolOffMinutes: z.number().positive().default(ABUSE_DEFAULTS.coolOffMinutes),
      cardAttempts: z.number().int().positive().default(ABUSE_DEFAULTS.cardAttempts),
      cardDeclines: z.number().int().positive().default(ABUSE_DEFAULTS.cardDeclines),
      cardWindowMinutes: z.number().positive().default(ABUSE_DEFAULTS.cardWindowMinutes),
      sandbox: z.boolean().default(ABUSE_DEFAULTS.sandbox),
    })
    .default(ABUSE_DEFAULTS),
  offline: z
    .object({
      perPaymentMinor: z.number().int().positive().default(100_000),
      totalMinor: z.number().int().positive().default(1_000_000),
      expiryHours: z.number().positive().default(72),
    })
    .default({ perPaymentMinor: 100_000, totalMinor: 1_000_000, expiryHours: 72 }),
  /** What paired terminals offer: preset amounts (minor units) and a cover-the-fee percentage. */
  terminal: z
    .object({
      presetsMinor: z
        .array(z.number().int().positive())
        .max(12)
        .default([1800, 3600, 5400, 10_000, 18_000, 36_000]),
      coverFeePercent: z.number().min(0).max(10).default(0),
      /** The charity-card providers' names as donors know them (e.g. Provider_1: "Donors' Fund"). */
      providerNames: z.partialRecord(z.enum(CHARITY_PROVIDER_IDS), z.string().min(1).max(64)).default({}),
      /** The organisation's look on its kiosks: a colour and a small logo (a data: URL, kept offline). */
      brand: z.object({ color: BRAND_COLOR.optional(), logo: BRAND_LOGO.optional() }).default({}),
    })
    .default({
      presetsMinor: [1800, 3600, 5400, 10_000, 18_000, 36_000],
      coverFeePercent: 0,
      providerNames: {},
      brand: {},
    }),
  /**
   * Tax receipts (receipts/): the organisation's legal details as donors' tax authorities want
   * them, and the tax statement per language (`{legalName}` and `{taxId}` are filled in; absent:
   * the default wording for a US or an Israeli organisation, by `il`). Receipts are e-mailed once
   * the legal name and tax id are set, unless `enabled` is false.
   */
  receipts: z
    .object({
      enabled: z.boolean().optional(),
      legalName: RECEIPT_TEXT.optional(),
      address: RECEIPT_STATEMENT.optional(),
      taxId: z.string().min(1).max(64).optional(),
      statementEn: RECEIPT_STATEMENT.optional(),
      statementHe: RECEIPT_STATEMENT.optional(),
    })
    .default({}),
});
export type OrgSettings = z.infer<typeof orgSettings>;

export const currencyList = z.array(z.enum(CURRENCIES)).min(1);

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** The civil date (`YYYY-MM-DD`) of an instant in a time zone. */
export function civilDateIn(instant: Date, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-CA', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  }).formatToParts(instant);
  const get = (t: string) => parts.find((p) => p.type === t)?.value ?? '';
  return `${get('year')}-${get('month')}-${get('day')}`;
}
