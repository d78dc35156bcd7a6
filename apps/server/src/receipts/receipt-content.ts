/**
 * What a receipt says, in English or Hebrew: one document model from which the PDF, the HTML and
 * the plain-text e-mail are drawn (and which the terminal's printed receipt mirrors), so all of
 * them say the same. Pure: no I/O.
 */
import type { ReceiptKind, ReceiptLanguage } from '@kupah/contracts';
import { civilDateIn, hebrewDateOf } from '@kupah/schedule';
import type { OrgSettings } from '../orgs/settings.ts';

/** A payment as a receipt tells it (loaded by repo.ts; never a card number: brand and last 4 only). */
export interface ReceiptFacts {
  receiptNum: string;
  status: 'Success' | 'Voided' | 'PartiallyRefunded' | 'Refunded';
  amountMinor: number;
  /** Refunded so far (0 when none), and when last. */
  refundedMinor: number;
  refundedAt: Date | null;
  currency: string;
  method: string;
  brand: string | null;
  last4: string | null;
  /** When the donation was made (the request's paymentDate). */
  paidAt: Date;
  voidedAt: Date | null;
  note: string | null;
  isAnonymous: boolean;
  donor: ReceiptDonor | null;
  campaign: { number: number; name: string | null } | null;
  reasons: { number: number; name: string | null; nameHebrew: string | null; amountMinor: number }[];
  schedule: {
    scheduleNum: number;
    frequency: string;
    count: number;
    firstMinor: number;
    perPaymentMinor: number;
    totalMinor: number;
    /** This payment's place in the schedule (1 = the first payment). */
    instalment: number | null;
    /** The next instalment's date (civil), or null when none is planned here. */
    nextDate: string | null;
  } | null;
}

export interface ReceiptDonor {
  accountNum: string;
  firstName: string | null;
  lastName: string | null;
  firstNameHebrew: string | null;
  lastNameHebrew: string | null;
}

export interface ReceiptOrg {
  name: string;
  settings: OrgSettings;
}

/** One line of a receipt: a label and its value (either may hold Hebrew and Latin together). */
export interface ReceiptRow {
  label: string;
  value: string;
}

/** A receipt or statement, laid out in words, ready to be drawn (PDF, HTML, text, printer). */
export interface ReceiptDocument {
  language: ReceiptLanguage;
  rtl: boolean;
  /** The organisation as the tax authorities know it. */
  issuer: { legalName: string; address: string[]; taxIdLine: string | null };
  title: string;
  /** A correction or a copy says so first. */
  notice: string | null;
  rows: ReceiptRow[];
  /** Year-end statement: one line per gift, and totals per currency. */
  table: { head: string[]; rows: string[][]; totals: ReceiptRow[] } | null;
  statement: string[];
  footer: string;
}

// ---------------------------------------------------------------------------------------------
// Organisation settings

/** Receipts are e-mailed once the legal name and tax id are set, unless turned off. */
export function receiptsEnabled(settings: OrgSettings): boolean {
  const r = settings.receipts;
  return r.enabled ?? Boolean(r.legalName && r.taxId);
}

/** Default tax statements: US 501(c)(3) wording, or Israeli section 46 wording (`il`). */
export const DEFAULT_STATEMENTS = {
  us: {
    en:
      'No goods or services were provided in exchange for this contribution. {legalName} is a tax-exempt ' +
      'organization under section 501(c)(3) of the Internal Revenue Code, EIN {taxId}. Please keep this ' +
      'receipt for your tax records.',
    he:
      'לא ניתנו טובין או שירותים בתמורה לתרומה זו. {legalName} הוא ארגון פטור ממס לפי סעיף 501(c)(3) ' +
      'לחוק המס האמריקאי, מספר מזהה EIN {taxId}. נא לשמור קבלה זו לצורכי מס.',
  },
  il: {
    en:
      'This donation qualifies for a tax credit under section 46 of the Israeli Income Tax Ordinance. ' +
      '{legalName} is an approved public institution, approval number {taxId}. Please keep this receipt ' +
      'for your tax records.',
    he:
      'תרומה זו מזכה בזיכוי ממס לפי סעיף 46 לפקודת מס הכנסה. {legalName} הוא מוסד ציבורי מאושר לעניין ' +
      'סעיף 46, מספר אישור {taxId}. נא לשמור קבלה זו לצורכי מס.',
  },
} as const;

/** The organisation's tax statement in a language, its legal name and tax id filled in. */
export function taxStatement(org: ReceiptOrg, language: ReceiptLanguage): string {
  const r = org.settings.receipts;
  const template =
    (language === 'he' ? r.statementHe : r.statementEn) ??
    DEFAULT_STATEMENTS[org.settings.il ? 'il' : 'us'][language];
  return template.replaceAll('{legalName}', legalNameOf(org)).replaceAll('{taxId}', r.taxId ?? '—');
}

const legalNameOf = (org: ReceiptOrg): string => org.settings.receipts.legalName ?? org.name;

/**
 * The language of a receipt: the one asked for, else the donor's (a donor known only by a Hebrew
 * name reads Hebrew, only by an English name English), else Hebrew for an Israeli organisation,
 * else English.
 */
export function receiptLanguage(
  asked: ReceiptLanguage | null | undefined,
  donor: ReceiptDonor | null,
  il: boolean,
): ReceiptLanguage {
  if (asked) return asked;
  if (donor) {
    const english = Boolean(donor.firstName || donor.lastName);
    const hebrew = Boolean(donor.firstNameHebrew || donor.lastNameHebrew);
    if (hebrew && !english) return 'he';
    if (english && !hebrew) return 'en';
  }
  return il ? 'he' : 'en';
}

// ---------------------------------------------------------------------------------------------
// Words

const LABELS = {
  en: {
    receipt: 'Donation receipt',
    statement: 'Year-end statement {year}',
    copy: 'COPY of the receipt issued for this donation.',
    correction:
      'CORRECTED RECEIPT: this donation was voided on {date} and the amount was not collected. It replaces ' +
      'the receipt issued before and is not valid for a tax deduction.',
    refundedInFull:
      'CORRECTED RECEIPT: this donation was refunded in full on {date}. It replaces the receipt issued before ' +
      'and is not valid for a tax deduction.',
    refundedInPart:
      'CORRECTED RECEIPT: {refunded} of this donation was refunded on {date}; the donation is now {net}. It ' +
      'replaces the receipt issued before.',
    refunded: 'Refunded',
    net: 'Donation after refunds',
    receiptNum: 'Receipt number',
    date: 'Date',
    amount: 'Amount',
    method: 'Payment method',
    campaign: 'Campaign',
    reason: 'Reason',
    split: 'Split',
    note: 'Note',
    donor: 'Donor',
    anonymous: 'Anonymous',
    schedule: 'Recurring donation',
    scheduleTerms: 'payment {n} of {count}: {first} first, then {per} each; total {total} ({frequency})',
    scheduleTermsOne: 'payment {n} of {count}: {per} each; total {total} ({frequency})',
    next: 'Next payment',
    taxIdUs: 'EIN',
    taxIdIl: 'Registration number',
    ending: '{brand} ending {last4}',
    gifts: 'Gifts',
    total: 'Total {currency}',
    head: ['Date', 'Receipt', 'For', 'Amount'],
    year: 'Year',
    footer: 'Thank you for your generosity.',
    none: 'No gifts were received in this year.',
  },
  he: {
    receipt: 'קבלה על תרומה',
    statement: 'ריכוז תרומות לשנת {year}',
    copy: 'העתק של הקבלה שהונפקה לתרומה זו.',
    correction:
      'קבלה מתוקנת: תרומה זו בוטלה בתאריך {date} והסכום לא נגבה. קבלה זו מחליפה את הקבלה הקודמת ואינה מזכה ' +
      'בזיכוי ממס.',
    refundedInFull:
      'קבלה מתוקנת: תרומה זו הוחזרה במלואה בתאריך {date}. קבלה זו מחליפה את הקבלה הקודמת ואינה מזכה בזיכוי ממס.',
    refundedInPart:
      'קבלה מתוקנת: {refunded} מתרומה זו הוחזרו בתאריך {date}; סכום התרומה כעת {net}. קבלה זו מחליפה את הקבלה הקודמת.',
    refunded: 'הוחזר',
    net: 'סכום התרומה לאחר החזר',
    receiptNum: 'מספר קבלה',
    date: 'תאריך',
    amount: 'סכום',
    method: 'אמצעי תשלום',
    campaign: 'קמפיין',
    reason: 'מטרה',
    split: 'חלוקה',
    note: 'הערה',
    donor: 'תורם',
    anonymous: 'תורם אנונימי',
    schedule: 'הוראת קבע',
    scheduleTerms: 'תשלום {n} מתוך {count}: ראשון {first}, אחריו {per} לתשלום; סך הכול {total} ({frequency})',
    scheduleTermsOne: 'תשלום {n} מתוך {count}: {per} לתשלום; סך הכול {total} ({frequency})',
    next: 'התשלום הבא',
    taxIdUs: 'מספר מזהה EIN',
    taxIdIl: 'מספר עמותה',
    ending: '{brand} המסתיים ב־{last4}',
    gifts: 'תרומות',
    total: 'סך הכול {currency}',
    head: ['תאריך', 'קבלה', 'עבור', 'סכום'],
    year: 'שנה',
    footer: 'תודה על נדיבותך.',
    none: 'לא התקבלו תרומות בשנה זו.',
  },
} as const;

const METHODS = {
  en: { Credit_Card: 'Card', ACH: 'Bank account (ACH)', provider: 'Charity card {n}' },
  he: { Credit_Card: 'כרטיס אשראי', ACH: 'חשבון בנק', provider: 'כרטיס צדקה {n}' },
} as const;

const FREQUENCIES: Record<ReceiptLanguage, Record<string, string>> = {
  en: {
    Daily: 'daily',
    Weekly: 'weekly',
    Every_3rd_week: 'every 3 weeks',
    Every_4th_week: 'every 4 weeks',
    Monthly: 'monthly',
    Every_2nd_month: 'every 2 months',
    Every_3rd_month: 'every 3 months',
    Annually: 'yearly',
    Monthly_Hebrew: 'monthly, Hebrew calendar',
    Every_2nd_Hebrew_month: 'every 2 Hebrew months',
    Every_3rd_Hebrew_month: 'every 3 Hebrew months',
    Annually_Hebrew: 'yearly, Hebrew calendar',
    Yizkor: 'Yizkor days',
    Special_Days: 'special days',
  },
  he: {
    Daily: 'יומי',
    Weekly: 'שבועי',
    Every_3rd_week: 'כל 3 שבועות',
    Every_4th_week: 'כל 4 שבועות',
    Monthly: 'חודשי',
    Every_2nd_month: 'כל חודשיים',
    Every_3rd_month: 'כל 3 חודשים',
    Annually: 'שנתי',
    Monthly_Hebrew: 'חודשי לפי הלוח העברי',
    Every_2nd_Hebrew_month: 'כל חודשיים עבריים',
    Every_3rd_Hebrew_month: 'כל 3 חודשים עבריים',
    Annually_Hebrew: 'שנתי לפי הלוח העברי',
    Yizkor: 'ימי יזכור',
    Special_Days: 'ימים מיוחדים',
  },
};

const fill = (template: string, values: Record<string, string | number>): string =>
  template.replace(/\{(\w+)\}/g, (m, k: string) => (k in values ? String(values[k]) : m));

const SYMBOLS: Record<string, string> = { USD: '$', ILS: '₪', EUR: '€', GBP: '£', CAD: 'CA$' };

/** An amount in minor units as donors read it: `$1,234.56` (English), `1,234.56 ₪` (Hebrew). */
export function formatMoney(minor: number, currency: string, language: ReceiptLanguage): string {
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  const whole = Math.floor(abs / 100)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const amount = `${whole}.${String(abs % 100).padStart(2, '0')}`;
  const symbol = SYMBOLS[currency] ?? currency;
  return language === 'he' ? `${sign}${amount} ${symbol}` : `${sign}${symbol}${amount}`;
}

const MONTHS_EN = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

/** Niqqud and cantillation removed: printed receipts use plain letters (and their geresh marks). */
const withoutPoints = (s: string): string => s.replace(/[\u0591-\u05C7]/g, '');

/** A civil date (`YYYY-MM-DD`) as donors read it, with its Hebrew date. */
export function formatDate(civil: string, language: ReceiptLanguage, withHebrew = true): string {
  const [y, m, d] = civil.split('-').map(Number) as [number, number, number];
  const hebrew = withHebrew ? hebrewDateOf(civil) : null;
  if (language === 'he') {
    const date = `${d}.${m}.${y}`;
    return hebrew ? `${date} · ${withoutPoints(hebrew.he)}` : date;
  }
  const date = `${MONTHS_EN[m - 1]} ${d}, ${y}`;
  return hebrew ? `${date} · ${hebrew.en}` : date;
}

export function donorName(donor: ReceiptDonor | null, language: ReceiptLanguage): string | null {
  if (!donor) return null;
  const english = [donor.firstName, donor.lastName].filter(Boolean).join(' ');
  const hebrew = [donor.firstNameHebrew, donor.lastNameHebrew].filter(Boolean).join(' ');
  return (language === 'he' ? hebrew || english : english || hebrew) || null;
}

function methodText(f: ReceiptFacts, org: ReceiptOrg, language: ReceiptLanguage): string {
  const L = LABELS[language];
  const names = METHODS[language];
  const provider = /^Provider_(\d)$/.exec(f.method);
  const base = provider
    ? (org.settings.terminal.providerNames[f.method as keyof OrgSettings['terminal']['providerNames']] ??
      fill(names.provider, { n: provider[1]! }))
    : f.method === 'Credit_Card'
      ? names.Credit_Card
      : f.method === 'ACH'
        ? names.ACH
        : f.method;
  if (!f.last4) return base;
  return fill(L.ending, { brand: f.brand ?? base, last4: f.last4 });
}

function issuerOf(org: ReceiptOrg, language: ReceiptLanguage): ReceiptDocument['issuer'] {
  const r = org.settings.receipts;
  const L = LABELS[language];
  return {
    legalName: legalNameOf(org),
    address: (r.address ?? '')
      .split(/\r?\n/)
      .map((l) => l.trim())
      .filter(Boolean),
    taxIdLine: r.taxId ? `${org.settings.il ? L.taxIdIl : L.taxIdUs}: ${r.taxId}` : null,
  };
}

function reasonName(r: ReceiptFacts['reasons'][number], language: ReceiptLanguage): string {
  const name = language === 'he' ? (r.nameHebrew ?? r.name) : (r.name ?? r.nameHebrew);
  return name ?? `#${r.number}`;
}

/** The receipt of one payment: a first receipt, a copy, or the correction after a void. */
export function receiptDocument(
  f: ReceiptFacts,
  org: ReceiptOrg,
  language: ReceiptLanguage,
  kind: Exclude<ReceiptKind, 'annual'>,
): ReceiptDocument {
  const L = LABELS[language];
  const tz = org.settings.timezone;
  const money = (minor: number) => formatMoney(minor, f.currency, language);
  const rows: ReceiptRow[] = [
    { label: L.receiptNum, value: f.receiptNum },
    { label: L.date, value: formatDate(civilDateIn(f.paidAt, tz), language) },
    { label: L.amount, value: money(f.amountMinor) },
    { label: L.method, value: methodText(f, org, language) },
  ];
  if (f.refundedMinor > 0) {
    rows.push({ label: L.refunded, value: money(f.refundedMinor) });
    rows.push({ label: L.net, value: money(f.amountMinor - f.refundedMinor) });
  }
  if (f.campaign) rows.push({ label: L.campaign, value: f.campaign.name ?? `#${f.campaign.number}` });
  if (f.reasons.length === 1) rows.push({ label: L.reason, value: reasonName(f.reasons[0]!, language) });
  for (const r of f.reasons.length > 1 ? f.reasons : []) {
    rows.push({ label: L.split, value: `${reasonName(r, language)}: ${money(r.amountMinor)}` });
  }
  if (f.note) rows.push({ label: L.note, value: f.note });
  const name = f.isAnonymous ? null : donorName(f.donor, language);
  rows.push({
    label: L.donor,
    value: name ? `${name} (${f.donor!.accountNum})` : L.anonymous,
  });
  const s = f.schedule;
  if (s) {
    const terms = s.firstMinor === s.perPaymentMinor ? L.scheduleTermsOne : L.scheduleTerms;
    rows.push({
      label: L.schedule,
      value: fill(terms, {
        n: s.instalment ?? 1,
        count: s.count,
        first: money(s.firstMinor),
        per: money(s.perPaymentMinor),
        total: money(s.totalMinor),
        frequency: FREQUENCIES[language][s.frequency] ?? s.frequency,
      }),
    });
    if (s.nextDate) rows.push({ label: L.next, value: formatDate(s.nextDate, language) });
  }
  const refundDate = () => formatDate(civilDateIn(f.refundedAt ?? f.paidAt, tz), language, false);
  const notice =
    kind === 'correction' && f.status === 'Voided'
      ? fill(L.correction, {
          date: formatDate(civilDateIn(f.voidedAt ?? f.paidAt, tz), language, false),
        })
      : kind === 'correction' && f.status === 'Refunded'
        ? fill(L.refundedInFull, { date: refundDate() })
        : kind === 'correction' && f.status === 'PartiallyRefunded'
          ? fill(L.refundedInPart, {
              date: refundDate(),
              refunded: money(f.refundedMinor),
              net: money(f.amountMinor - f.refundedMinor),
            })
          : kind === 'copy'
            ? L.copy
            : null;
  return {
    language,
    rtl: language === 'he',
    issuer: issuerOf(org, language),
    title: L.receipt,
    notice,
    rows,
    table: null,
    statement: f.status === 'Voided' || f.status === 'Refunded' ? [] : [taxStatement(org, language)],
    footer: L.footer,
  };
}

/** One gift on a year-end statement. */
export interface StatementGift {
  receiptNum: string;
  paidAt: Date;
  amountMinor: number;
  currency: string;
  campaign: string | null;
  reasons: { name: string | null; nameHebrew: string | null }[];
}

/** A donor's year-end statement: every successful gift of the year, totals per currency. */
export function statementDocument(
  donor: ReceiptDonor,
  gifts: readonly StatementGift[],
  year: number,
  org: ReceiptOrg,
  language: ReceiptLanguage,
): ReceiptDocument {
  const L = LABELS[language];
  const tz = org.settings.timezone;
  const totals = new Map<string, number>();
  const rows = gifts.map((g) => {
    totals.set(g.currency, (totals.get(g.currency) ?? 0) + g.amountMinor);
    const reasons = g.reasons.map((r) =>
      language === 'he' ? (r.nameHebrew ?? r.name ?? '') : (r.name ?? r.nameHebrew ?? ''),
    );
    return [
      formatDate(civilDateIn(g.paidAt, tz), language, false),
      g.receiptNum,
      [g.campaign, ...reasons].filter(Boolean).join(' · '),
      formatMoney(g.amountMinor, g.currency, language),
    ];
  });
  return {
    language,
    rtl: language === 'he',
    issuer: issuerOf(org, language),
    title: fill(L.statement, { year }),
    notice: gifts.length === 0 ? L.none : null,
    rows: [
      { label: L.donor, value: `${donorName(donor, language) ?? ''} (${donor.accountNum})` },
      { label: L.year, value: String(year) },
    ],
    table: {
      head: [...L.head],
      rows,
      totals: [...totals.entries()]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([currency, minor]) => ({
          label: fill(L.total, { currency }),
          value: formatMoney(minor, currency, language),
        })),
    },
    statement: [taxStatement(org, language)],
    footer: L.footer,
  };
}

/** The e-mail's subject. */
export function receiptSubject(doc: ReceiptDocument, kind: ReceiptKind, receiptNum: string | null): string {
  const he = doc.language === 'he';
  const prefix =
    kind === 'correction'
      ? he
        ? 'קבלה מתוקנת'
        : 'Corrected receipt'
      : kind === 'copy'
        ? he
          ? 'העתק'
          : 'Copy'
        : null;
  const main = receiptNum ? `${doc.title} ${receiptNum}` : doc.title;
  return `${prefix ? `${prefix}: ` : ''}${main} — ${doc.issuer.legalName}`;
}
