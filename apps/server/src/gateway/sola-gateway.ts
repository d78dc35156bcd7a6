/**
 * The Sola (formerly Cardknox) gateway adapter. It speaks Sola's JSON Transaction API
 * (`…/gatewayjson`) for charges, cards on file, voids and refunds, and Sola's Reporting API
 * (`…/reportjson`) to resolve a payment whose answer was lost. See docs/gateways.md, "Sola".
 *
 * Nothing here logs, and no error message or result ever carries the request body, the key,
 * a card or account number or a CVV: messages name only the command and the transport failure.
 */
import { createHash } from 'node:crypto';
import type { Currency, PaymentMethodId } from '@kupah/contracts';
import {
  type CallOptions,
  type Gateway,
  GatewayOutcomeUnknown,
  type GatewayResult,
  GatewayUnreachable,
  type Instrument,
  type LookupRequest,
} from './gateway.ts';

/** Sola's production endpoint of the JSON Transaction API (Transaction API page, "Endpoints"). */
export const SOLA_DEFAULT_URL = 'https://x1.cardknox.com/gatewayjson';
/** The gateway API version the adapter declares (`xVersion`; "The current version is 5.0.0"). */
export const SOLA_API_VERSION = '5.0.0';
/**
 * Sola does not run our recurrences: its Customer and Recurring API schedules charges by a civil
 * interval rule, and our instalments are a fixed list of dates (Hebrew-calendar ones included).
 * Configuration refuses the `Gateway` schedule handling mode for organisations on Sola.
 */
export const SOLA_RUNS_RECURRENCES = false;
/**
 * Length of the `xInvoice` we send. Sola's pages give no maximum for `xInvoice`; we keep it short
 * so that no processor behind Sola truncates it (a truncated invoice could no longer be matched).
 */
export const SOLA_INVOICE_LENGTH = 20;

/** The Reporting API's JSON endpoint on the same host as a `…/gatewayjson` URL. */
export function solaReportUrl(gatewayUrl: string): string {
  const u = new URL(gatewayUrl);
  u.pathname = /\/gatewayjson\/?$/i.test(u.pathname)
    ? u.pathname.replace(/\/gatewayjson\/?$/i, '/reportjson')
    : '/reportjson';
  u.search = '';
  u.hash = '';
  return u.toString();
}

/** `https://x1.cardknox.com/reportjson` (Reporting API page: base URL + `/reportjson`). */
export const SOLA_DEFAULT_REPORT_URL = solaReportUrl(SOLA_DEFAULT_URL);

/**
 * The `xInvoice` of an idempotency key: the first 20 characters of the base64url SHA-256 of the
 * key (120 bits). Deterministic, so a lookup finds what an earlier call sent; our keys
 * (`<org guid>:<uniqueTransactionId>`, up to ~300 characters) never reach Sola as such.
 */
export function solaInvoice(idempotencyKey: string): string {
  return createHash('sha256')
    .update(idempotencyKey, 'utf8')
    .digest('base64url')
    .slice(0, SOLA_INVOICE_LENGTH);
}

/** `#.##` from integer minor units, built from the digits (no floating point): 1050 → `10.50`. */
export function solaAmount(amountMinor: number): string {
  if (!Number.isSafeInteger(amountMinor) || amountMinor < 0) {
    throw new RangeError('amountMinor must be a non-negative safe integer');
  }
  const digits = String(amountMinor).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** Minor units of a Sola amount (`10.5`, `10.50`, `10`); null when it is not a plain decimal. */
export function solaAmountToMinor(text: string): number | null {
  const m = /^\s*(\d{1,13})(?:\.(\d{0,2}))?\s*$/.exec(text);
  if (!m) return null;
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

/** `xExp`: MMYY. */
export function solaExpiry(month: number, year: number): string {
  return `${String(month).padStart(2, '0')}${String(year % 100).padStart(2, '0')}`;
}

export interface SolaGatewayOptions {
  /** The merchant's Sola API key (`xKey`). */
  key: string;
  /** The JSON Transaction API endpoint; default `SOLA_DEFAULT_URL`. */
  url?: string;
  /** The Reporting API JSON endpoint; default: `/reportjson` on the host of `url`. */
  reportUrl?: string;
  softwareName?: string;
  softwareVersion?: string;
  fetch?: typeof fetch;
}

type Fields = Record<string, string>;
type Answer = Record<string, unknown>;

/** Connection failures that mean no byte of the request reached Sola. */
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

function errorCodes(err: unknown): string[] {
  const codes: string[] = [];
  const seen = new Set<unknown>();
  const visit = (e: unknown, depth: number): void => {
    if (e === null || typeof e !== 'object' || depth > 5 || seen.has(e)) return;
    seen.add(e);
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') codes.push(code);
    visit((e as { cause?: unknown }).cause, depth + 1);
    const errors = (e as { errors?: unknown }).errors;
    if (Array.isArray(errors)) for (const inner of errors) visit(inner, depth + 1);
  };
  visit(err, 0);
  return codes;
}

const str = (v: unknown): string =>
  typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
const orNull = (s: string): string | null => (s === '' ? null : s);
/** Sola masks numbers (`4xxxxxxxxxxx1111`); anything with a long run of digits is dropped. */
const safeMasked = (s: string): string | null => (s === '' || /\d{9,}/.test(s) ? null : s);

function statusOf(letter: string): GatewayResult['status'] | null {
  const c = letter.charAt(0).toUpperCase();
  return c === 'A' ? 'Success' : c === 'D' ? 'Declined' : c === 'E' ? 'Error' : null;
}

/** Our code of a decline or error: Sola's own `xErrorCode` where it gives one. */
function codeOf(status: GatewayResult['status'], errorCode: string): string | null {
  if (status === 'Success') return null;
  if (errorCode !== '') return `SOLA_${errorCode}`;
  return status === 'Declined' ? 'SOLA_DECLINED' : 'SOLA_ERROR';
}

/** A Transaction API answer → our result (`xResult` has been checked to be A, D or E). */
function toResult(a: Answer): GatewayResult {
  const status = statusOf(str(a.xResult)) ?? 'Error';
  const errorCode = str(a.xErrorCode);
  return {
    status,
    gatewayRef: orNull(str(a.xRefNum)),
    token: orNull(str(a.xToken)),
    code: codeOf(status, errorCode),
    message: status === 'Success' ? null : (orNull(str(a.xError)) ?? orNull(str(a.xStatus))),
    brand: orNull(str(a.xCardType)),
    masked: safeMasked(str(a.xMaskedCardNumber)) ?? safeMasked(str(a.xMaskedAccountNumber)),
  };
}

const refused = (code: string, message: string): GatewayResult => ({
  status: 'Error',
  gatewayRef: null,
  token: null,
  code,
  message,
});

const notSupported = (method: PaymentMethodId): GatewayResult =>
  refused('METHOD_NOT_SUPPORTED', `Sola does not process ${method} payments`);

/** Sola's duplicate checker refused a repeat of an earlier transaction (same invoice, same card). */
const isDuplicateRefusal = (a: Answer): boolean =>
  statusOf(str(a.xResult)) === 'Error' && /duplicate/i.test(str(a.xError));

/** `yyyy-MM-dd HH:mm:ss` (UTC) for the report's date range. */
function reportDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
}

const SALES = new Set(['cc:sale', 'check:sale']);
const SAVES = new Set(['cc:save', 'check:save']);
const REFUNDS = new Set(['cc:refund', 'check:refund']);

export function solaGateway(opts: SolaGatewayOptions): Gateway {
  const url = opts.url ?? SOLA_DEFAULT_URL;
  const reportUrl = opts.reportUrl ?? solaReportUrl(url);
  const doFetch = opts.fetch ?? fetch;
  const base: Fields = {
    xKey: opts.key,
    xVersion: SOLA_API_VERSION,
    xSoftwareName: opts.softwareName ?? 'Kupah',
    xSoftwareVersion: opts.softwareVersion ?? '0.1.0',
  };

  /** POSTs one command and returns Sola's answer, or throws Unreachable / OutcomeUnknown. */
  async function send(endpoint: string, fields: Fields, signal: AbortSignal | undefined): Promise<Answer> {
    const what = `Sola ${fields.xCommand ?? 'request'}`;
    if (signal?.aborted) throw new GatewayUnreachable(`${what}: aborted before sending`);
    let res: Response;
    try {
      res = await doFetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ ...base, ...fields }),
        redirect: 'manual',
        signal: signal ?? null,
      });
    } catch (err) {
      if (signal?.aborted) throw new GatewayOutcomeUnknown(`${what}: aborted while waiting for the answer`);
      const codes = errorCodes(err);
      if (codes.length > 0 && codes.every((c) => NOT_SENT.has(c))) {
        throw new GatewayUnreachable(`${what}: not sent (${[...new Set(codes)].join(', ')})`);
      }
      throw new GatewayOutcomeUnknown(
        `${what}: no answer (${codes.length > 0 ? [...new Set(codes)].join(', ') : 'connection failed'})`,
      );
    }
    let text: string;
    try {
      text = await res.text();
    } catch (err) {
      const codes = errorCodes(err);
      throw new GatewayOutcomeUnknown(
        `${what}: answer cut short (${signal?.aborted ? 'aborted' : codes.join(', ') || 'read failed'})`,
      );
    }
    if (res.status >= 500) throw new GatewayOutcomeUnknown(`${what}: HTTP ${res.status}`);
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new GatewayOutcomeUnknown(`${what}: HTTP ${res.status} with an answer that is not JSON`);
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) {
      throw new GatewayOutcomeUnknown(`${what}: HTTP ${res.status} with an answer that is not an object`);
    }
    const a = answer as Answer;
    if (statusOf(str(a.xResult)) === null) {
      throw new GatewayOutcomeUnknown(`${what}: HTTP ${res.status} without a readable xResult`);
    }
    return a;
  }

  /** The card or account fields of an instrument, or a refusal. */
  function instrumentFields(
    instrument: Instrument,
  ): { prefix: 'cc' | 'check'; fields: Fields } | GatewayResult {
    if ('token' in instrument) {
      if (instrument.method === 'Credit_Card') return { prefix: 'cc', fields: { xToken: instrument.token } };
      if (instrument.method === 'ACH') return { prefix: 'check', fields: { xToken: instrument.token } };
      return notSupported(instrument.method);
    }
    if (instrument.method === 'Credit_Card') {
      const { card, cardHolderName } = instrument;
      const fields: Fields = { xCardNum: card.pan, xExp: solaExpiry(card.expMonth, card.expYear) };
      if (card.cvv !== '') fields.xCVV = card.cvv;
      const name = cardHolderName?.trim() ?? '';
      if (name !== '') fields.xName = name;
      return { prefix: 'cc', fields };
    }
    if (instrument.method === 'ACH') {
      const { bank } = instrument;
      const name = bank.nameOnAccount?.trim() ?? '';
      if (name === '') {
        return refused('NAME_ON_ACCOUNT_REQUIRED', 'Sola requires the name on the account for ACH');
      }
      return {
        prefix: 'check',
        fields: { xRouting: bank.routingNum, xAccount: bank.accountNum, xName: name },
      };
    }
    return notSupported(instrument.method);
  }

  async function lookup(req: LookupRequest, opts?: CallOptions): Promise<GatewayResult | null> {
    const invoice = solaInvoice(req.idempotencyKey);
    const day = 24 * 60 * 60 * 1000;
    const sent = req.sentAt.getTime();
    const answer = await send(
      reportUrl,
      {
        xCommand: 'report:all',
        // A day either side: Sola's report clock need not be UTC, and the filter is the invoice.
        xBeginDate: reportDate(sent - day),
        xEndDate: reportDate(sent + day),
        xgetnewest: 'true',
        xmaxrecords: '1000',
        // `ai` = exact match ("In") on any reporting field.
        xInvoice: `ai${invoice}`,
      },
      opts?.signal,
    );
    if (statusOf(str(answer.xResult)) !== 'Success') {
      const code = str(answer.xErrorCode);
      throw new GatewayOutcomeUnknown(
        `Sola report:all refused${code ? ` (SOLA_${code})` : ''}: ${str(answer.xError) || 'no reason given'}`,
      );
    }
    if (!Array.isArray(answer.xReportData)) {
      throw new GatewayOutcomeUnknown('Sola report:all: answer without xReportData');
    }
    const wanted = req.kind === 'authorize' ? SALES : req.kind === 'refund' ? REFUNDS : SAVES;
    const rows = answer.xReportData.filter(
      (row): row is Answer =>
        row !== null &&
        typeof row === 'object' &&
        str((row as Answer).xInvoice) === invoice &&
        wanted.has(str((row as Answer).xCommand).toLowerCase()),
    );
    if (rows.length === 0) return null;
    const results = rows.map((row) => {
      const status = statusOf(str(row.xResponseResult) || str(row.xResult));
      if (status === null)
        throw new GatewayOutcomeUnknown('Sola report:all: a row without a readable result');
      return { row, status };
    });
    const rank = { Success: 0, Declined: 1, Error: 2 } as const;
    const best = [...results].sort((x, y) => rank[x.status] - rank[y.status])[0]!;
    const { row, status } = best;
    const errorCode = str(row.xErrorCode);
    const notes: string[] = [];
    if (rows.length > 1) {
      const refs = results.map((r) => `${str(r.row.xRefNum) || '?'}=${r.status}`).join(', ');
      notes.push(
        `Sola reports ${rows.length} transactions for this invoice (${refs}); the approved one is used`,
      );
    }
    if (req.kind === 'authorize' || req.kind === 'refund') {
      const amount = solaAmountToMinor(str(row.xRequestAmount) || str(row.xAmount));
      if (amount !== null && amount !== req.amountMinor) {
        notes.push(`Sola's amount ${solaAmount(amount)} differs from ${solaAmount(req.amountMinor)}`);
      }
    }
    if (str(row.xVoid) === '1') notes.push('Sola reports this transaction as voided');
    const own =
      status === 'Success'
        ? null
        : (orNull(str(row.xResponseError)) ?? orNull(str(row.xError)) ?? orNull(str(row.xStatus)));
    const message = [own, ...notes].filter((s): s is string => s !== null).join('; ');
    return {
      status,
      gatewayRef: orNull(str(row.xRefNum)),
      token: orNull(str(row.xToken)),
      code: codeOf(status, errorCode),
      message: message === '' ? null : message,
      brand: orNull(str(row.xCardType)),
      masked: safeMasked(str(row.xMaskedCardNumber)) ?? safeMasked(str(row.xMaskedAccountNumber)),
    };
  }

  return {
    name: 'Sola',

    async authorize(req, opts) {
      if (!Number.isSafeInteger(req.amountMinor) || req.amountMinor <= 0) {
        return refused('INVALID_AMOUNT', 'The amount must be a positive whole number of minor units');
      }
      const inst = instrumentFields(req.instrument);
      if ('status' in inst) return inst;
      const currency: Currency = req.currency;
      const answer = await send(
        url,
        {
          xCommand: `${inst.prefix}:sale`,
          xAmount: solaAmount(req.amountMinor),
          xCurrency: currency,
          xInvoice: solaInvoice(req.idempotencyKey),
          ...inst.fields,
        },
        opts?.signal,
      );
      if (!isDuplicateRefusal(answer)) return toResult(answer);
      // Sola refused this as a repeat of an earlier sale of the same invoice: that earlier sale is
      // the answer (our idempotency). Anything short of finding it leaves the payment in doubt.
      let original: GatewayResult | null;
      try {
        original = await lookup(
          {
            idempotencyKey: req.idempotencyKey,
            kind: 'authorize',
            amountMinor: req.amountMinor,
            currency,
            sentAt: new Date(),
          },
          opts,
        );
      } catch (err) {
        throw new GatewayOutcomeUnknown(
          `Sola refused a duplicate and its original could not be read: ${(err as Error).message}`,
        );
      }
      if (!original)
        throw new GatewayOutcomeUnknown('Sola refused a duplicate whose original it does not report');
      return original;
    },

    async tokenize(req, opts) {
      const { instrument } = req;
      if ('token' in instrument) {
        if (instrument.method !== 'Credit_Card' && instrument.method !== 'ACH') {
          return notSupported(instrument.method);
        }
        // Already a Sola token: nothing to save.
        return { status: 'Success', gatewayRef: null, token: instrument.token, code: null, message: null };
      }
      const inst = instrumentFields(instrument);
      if ('status' in inst) return inst;
      const answer = await send(
        url,
        { xCommand: `${inst.prefix}:save`, xInvoice: solaInvoice(req.idempotencyKey), ...inst.fields },
        opts?.signal,
      );
      return toResult(answer);
    },

    async void(req, opts) {
      const prefix = req.method === 'Credit_Card' ? 'cc' : req.method === 'ACH' ? 'check' : null;
      if (!prefix) return notSupported(req.method);
      const answer = await send(url, { xCommand: `${prefix}:void`, xRefNum: req.gatewayRef }, opts?.signal);
      return toResult(answer);
    },

    refunds: (method) => method === 'Credit_Card' || method === 'ACH',

    async refund(req, opts) {
      const prefix = req.method === 'Credit_Card' ? 'cc' : req.method === 'ACH' ? 'check' : null;
      if (!prefix) return notSupported(req.method);
      if (!Number.isSafeInteger(req.amountMinor) || req.amountMinor <= 0) {
        return refused('INVALID_AMOUNT', 'The amount must be a positive whole number of minor units');
      }
      // Transaction API, Credit Card / Check pages, "Refund": the original's xRefNum and the amount
      // to return (partial refunds allowed; Sola refuses more than what remains of the original).
      // xInvoice (our refund's key, hashed) lets `lookup` find a refund whose answer was lost.
      const answer = await send(
        url,
        {
          xCommand: `${prefix}:refund`,
          xRefNum: req.gatewayRef,
          xAmount: solaAmount(req.amountMinor),
          xInvoice: solaInvoice(req.idempotencyKey),
        },
        opts?.signal,
      );
      return toResult(answer);
    },

    lookup,
  };
}
