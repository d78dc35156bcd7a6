/**
 * A local emulator of the subset of Sola's (Cardknox's) wire format that `solaGateway` uses, for
 * tests: a `node:http` server on 127.0.0.1 with in-memory state, speaking
 *
 * - `POST /gatewayjson` (JSON Transaction API): `cc:sale`, `cc:save`, `cc:void`, `cc:refund`,
 *   `check:sale`, `check:save`, `check:void`, `check:refund`;
 * - `POST /reportjson` (JSON Reporting API): `report:all`, `report:approved`, `report:declined`
 *   over `xBeginDate`/`xEndDate`, with `xgetnewest`, `xmaxrecords` and `ai` (exact match) filters
 *   on any reporting field, e.g. `xInvoice: "ai<invoice>"`.
 *
 * Outcomes follow the sandbox instruments of this repository (`SANDBOX_INSTRUMENTS`,
 * `sandboxOutcome` in @kupah/instruments): cards 4111111111111111, 4242424242424242,
 * 5555555555554444 and 378282246310005 (and any other valid number) are approved, 4000000000000002
 * is declined, 4000000000000119 gives a processing error; ACH accounts ending in 0002 are declined,
 * ending in 0119 error, any other (e.g. 011000015 / 000123456789) is approved. `cc:save` and
 * `check:save` store the instrument without asking the issuer, so they approve any well-formed one.
 *
 * A wrong `xKey` gets Sola's documented gateway error 01208 "Specified Key Not Found"; a request
 * without a card gets 01473 "Card Or Magstripe Required". Decline and processing-error codes
 * (00005 "Do Not Honor", 00096 "System Error") are this emulator's choice.
 *
 * Duplicates, as Sola documents them: a repeat of an approved sale (same command, same `xInvoice`,
 * same amount, same card or account) within the duplicate window (10 minutes, or `xDuplicateWindow`
 * minutes) is refused with "Duplicate Transaction" unless `xAllowDuplicate` is true. After the
 * window the same invoice is simply charged again: Sola's invoice is no idempotency key, which is
 * why the adapter resolves a lost answer through the report before anything is sent again.
 *
 * It never logs, never keeps a card number, account number or CVV (only last 4 and a hash for
 * duplicate detection), and `received()` shows requests with those fields and the key masked.
 */
import { createHash, randomInt } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { detectBrand, type SandboxOutcome, sandboxOutcome } from '@kupah/instruments';

export type SolaFault = 'drop-after-processing' | 'hang' | 'http-500' | 'malformed' | 'refuse';

export interface SolaEmulatorOptions {
  /** The accepted `xKey`; default `sola_emulator_key`. */
  key?: string;
  /** Default duplicate window in minutes (Sola's default is 10). */
  duplicateWindowMinutes?: number;
  /** The emulator's clock (tests move it to cross the duplicate window). */
  now?: () => number;
  /**
   * Whether a sale is settled at once (default true). When false, sales stay unsettled until
   * `settle()`, and a refund of an unsettled sale is refused (this emulator's wording: "Original
   * Transaction Not Settled"; void it instead).
   */
  settleAtOnce?: boolean;
}

/** One refund the emulator processed. */
export interface SolaRefund {
  refNum: string;
  command: 'cc:refund' | 'check:refund';
  /** The refunded sale's `xRefNum`. */
  original: string;
  invoice: string;
  amount: string;
  at: Date;
}

/** One sale the emulator processed (gateway-level refusals such as a duplicate are not sales). */
export interface SolaCharge {
  refNum: string;
  command: 'cc:sale' | 'check:sale';
  invoice: string;
  amount: string;
  result: 'A' | 'D' | 'E';
  last4: string;
  token: string | null;
  voided: boolean;
  at: Date;
}

export interface SolaEmulator {
  /** The JSON Transaction API endpoint (`…/gatewayjson`). */
  url: string;
  /** The JSON Reporting API endpoint (`…/reportjson`). */
  reportUrl: string;
  key: string;
  /** Every sale processed (optionally of one invoice), oldest first; no card data but last 4. */
  charges(invoice?: string): SolaCharge[];
  /** Every approved refund, oldest first. */
  refunds(): SolaRefund[];
  /** Settle every sale made so far (with `settleAtOnce: false`). */
  settle(): void;
  /** Every request body read, in order, with card/account numbers, CVV and key masked. */
  received(): Array<{ path: string; fields: Record<string, string> }>;
  /** HTTP requests that reached the server (refused connections never do). */
  requests(): number;
  setLatency(ms: number): void;
  setFault(kind: SolaFault | null): Promise<void>;
  close(): Promise<void>;
}

type Kind = 'cc' | 'check';

interface Txn {
  refNum: string;
  kind: Kind;
  op: 'sale' | 'save' | 'void' | 'refund';
  invoice: string;
  amount: string;
  result: 'A' | 'D' | 'E';
  status: string;
  error: string;
  errorCode: string;
  token: string | null;
  last4: string;
  masked: string;
  cardType: string;
  fingerprint: string;
  at: number;
  voided: boolean;
  /** Sales: settled (refundable); refunded so far, in cents. Refunds: the original's xRefNum. */
  settled: boolean;
  refundedCents: number;
  original?: string;
}

interface StoredToken {
  kind: Kind;
  outcome: SandboxOutcome;
  last4: string;
  masked: string;
  cardType: string;
  fingerprint: string;
}

const SOLA_CARD_TYPES: Record<string, string> = {
  Visa: 'Visa',
  Mastercard: 'MasterCard',
  'American Express': 'Amex',
  Discover: 'Discover',
  'Diners Club': 'Diners',
  JCB: 'JCB',
};

const OUTCOME: Record<
  SandboxOutcome,
  { result: 'A' | 'D' | 'E'; status: string; error: string; code: string }
> = {
  Success: { result: 'A', status: 'Approved', error: '', code: '00000' },
  Declined: { result: 'D', status: 'Declined', error: 'Do Not Honor', code: '00005' },
  Error: { result: 'E', status: 'Error', error: 'System Error', code: '00096' },
};

const REPORT_CONTROL = new Set([
  'xkey',
  'xversion',
  'xsoftwarename',
  'xsoftwareversion',
  'xcommand',
  'xbegindate',
  'xenddate',
  'xgetnewest',
  'xmaxrecords',
  'xfields',
  'xreturndownloadurl',
]);

const SENSITIVE = new Set(['xcardnum', 'xaccount', 'xcvv', 'xkey', 'xmagstripe']);

const hash = (s: string) => createHash('sha256').update(s).digest('hex');
const digitsOnly = (s: string) => s.replace(/\D/g, '');
const isTrue = (s: string | undefined) => s !== undefined && /^(true|1|yes)$/i.test(s);
const fmtDate = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
function parseDate(s: string | undefined): number | null {
  if (!s) return null;
  const iso = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(s) ? `${s.replace(' ', 'T')}Z` : s;
  const t = Date.parse(iso);
  return Number.isFinite(t) ? t : null;
}

function mask(key: string, value: string): string {
  if (key === 'xcvv') return '***';
  if (key === 'xkey') return '***';
  const d = digitsOnly(value);
  return `****${d.slice(-4)}`;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      s += c;
      if (s.length > 256 * 1024) req.destroy(new Error('body too large'));
    });
    req.on('end', () => resolve(s));
    req.on('error', reject);
  });
}

export async function startSolaEmulator(opts: SolaEmulatorOptions = {}): Promise<SolaEmulator> {
  const key = opts.key ?? 'sola_emulator_key';
  const now = opts.now ?? Date.now;
  const defaultWindow = opts.duplicateWindowMinutes ?? 10;
  const settleAtOnce = opts.settleAtOnce ?? true;
  const cents = (amount: string) => Math.round(Number(amount) * 100);
  const txns: Txn[] = [];
  const tokens = new Map<string, StoredToken>();
  const received: Array<{ path: string; fields: Record<string, string> }> = [];
  const hanging = new Set<ServerResponse>();
  let requestCount = 0;
  let latency = 0;
  let fault: SolaFault | null = null;
  let nextRef = 100_000_000 + randomInt(0, 800_000_000);

  const newRef = () => String(nextRef++);
  const newToken = () => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyz0123456789';
    let t = '';
    for (let i = 0; i < 32; i++) t += alphabet[randomInt(0, alphabet.length)];
    return t;
  };
  const gatewayError = (error: string, code = ''): Record<string, string> => ({
    xResult: 'E',
    xStatus: 'Error',
    xError: error,
    xErrorCode: code,
    xRefNum: '',
  });

  /** The instrument of a sale or save: a stored token, or card / account fields. */
  function instrumentOf(kind: Kind, f: Map<string, string>): StoredToken | Record<string, string> {
    const tok = f.get('xtoken');
    if (tok) {
      const stored = tokens.get(tok);
      if (!stored || stored.kind !== kind) return gatewayError('Invalid Token');
      return stored;
    }
    if (kind === 'cc') {
      const pan = digitsOnly(f.get('xcardnum') ?? '');
      if (pan === '') return gatewayError('Card Or Magstripe Required', '01473');
      if (pan.length < 12 || pan.length > 19) return gatewayError('Invalid Card Number');
      if (!/^(0[1-9]|1[0-2])\d{2}$/.test(f.get('xexp') ?? '')) return gatewayError('Invalid Expiration Date');
      const brand = detectBrand(pan);
      return {
        kind,
        outcome: sandboxOutcome('Credit_Card', { ccNum: pan }),
        last4: pan.slice(-4),
        masked: `${pan.slice(0, 1)}${'x'.repeat(pan.length - 5)}${pan.slice(-4)}`,
        cardType: (brand && SOLA_CARD_TYPES[brand]) ?? brand ?? 'Unknown',
        fingerprint: hash(`cc:${pan}`),
      } satisfies StoredToken;
    }
    const routing = digitsOnly(f.get('xrouting') ?? '');
    const account = digitsOnly(f.get('xaccount') ?? '');
    if (!/^\d{9}$/.test(routing)) return gatewayError('Invalid Routing Number');
    if (!/^\d{4,17}$/.test(account)) return gatewayError('Invalid Account Number');
    return {
      kind,
      outcome: sandboxOutcome('ACH', { accountNum: account }),
      last4: account.slice(-4),
      masked: `${'x'.repeat(account.length - 4)}${account.slice(-4)}`,
      cardType: '',
      fingerprint: hash(`check:${routing}:${account}`),
    } satisfies StoredToken;
  }

  function txnAnswer(t: Txn, extra: Record<string, string> = {}): Record<string, string> {
    return {
      xResult: t.result,
      xStatus: t.status,
      xError: t.error,
      xErrorCode: t.errorCode,
      xRefNum: t.refNum,
      xInvoice: t.invoice,
      xToken: t.token ?? '',
      ...(t.kind === 'cc'
        ? { xMaskedCardNumber: t.masked, xCardType: t.cardType }
        : { xMaskedAccountNumber: t.masked }),
      xDate: fmtDate(t.at),
      ...extra,
    };
  }

  function gateway(f: Map<string, string>): Record<string, string> {
    if (f.get('xkey') !== key) return gatewayError('Specified Key Not Found', '01208');
    for (const required of ['xversion', 'xsoftwarename', 'xsoftwareversion', 'xcommand']) {
      if (!f.get(required)) return gatewayError(`Required: ${required}`);
    }
    const command = (f.get('xcommand') ?? '').toLowerCase();
    const [prefix, op] = command.split(':') as [string, string | undefined];
    if ((prefix !== 'cc' && prefix !== 'check') || !op) return gatewayError('Invalid Command');
    const kind: Kind = prefix;

    if (op === 'void') {
      const ref = f.get('xrefnum') ?? '';
      const original = txns.find((t) => t.refNum === ref && t.op === 'sale' && t.kind === kind);
      if (original?.result !== 'A') return gatewayError('Original Transaction Not Found');
      if (original.voided) return gatewayError('Transaction Already Voided');
      original.voided = true;
      const v: Txn = { ...original, refNum: newRef(), op: 'void', invoice: '', at: now(), voided: false };
      txns.push(v);
      return txnAnswer(v, { xToken: '' });
    }
    if (op === 'refund') {
      const ref = f.get('xrefnum') ?? '';
      const original = txns.find((t) => t.refNum === ref && t.op === 'sale' && t.kind === kind);
      if (original?.result !== 'A') return gatewayError('Original Transaction Not Found');
      if (original.voided) return gatewayError('Original Transaction Voided');
      if (!original.settled) return gatewayError('Original Transaction Not Settled');
      const amount = f.get('xamount') ?? '';
      if (!/^\d{1,13}(\.\d{1,2})?$/.test(amount) || Number(amount) <= 0)
        return gatewayError('Invalid Amount');
      if (original.refundedCents + cents(amount) > cents(original.amount)) {
        return gatewayError('Amount Exceeds Original Transaction');
      }
      original.refundedCents += cents(amount);
      const r: Txn = {
        ...original,
        refNum: newRef(),
        op: 'refund',
        invoice: f.get('xinvoice') ?? '',
        amount,
        status: 'Approved',
        at: now(),
        voided: false,
        settled: false,
        refundedCents: 0,
        original: original.refNum,
      };
      txns.push(r);
      return txnAnswer(r, { xToken: '', xAuthAmount: amount });
    }
    if (op !== 'sale' && op !== 'save') return gatewayError('Invalid Command');

    let amount = '';
    if (op === 'sale') {
      amount = f.get('xamount') ?? '';
      if (!/^\d{1,13}(\.\d{1,2})?$/.test(amount) || Number(amount) <= 0)
        return gatewayError('Invalid Amount');
      if (kind === 'check' && !f.get('xtoken') && !f.get('xname')) return gatewayError('Required: xName');
    }
    const inst = instrumentOf(kind, f);
    if ('xResult' in inst) return inst as Record<string, string>;
    const instrument = inst as StoredToken;
    const invoice = f.get('xinvoice') ?? '';

    if (op === 'sale' && invoice !== '' && !isTrue(f.get('xallowduplicate'))) {
      const minutes = Number(f.get('xduplicatewindow') ?? defaultWindow);
      const windowMs = (Number.isFinite(minutes) ? minutes : defaultWindow) * 60_000;
      const t = now();
      const earlier = txns.find(
        (x) =>
          x.op === 'sale' &&
          x.kind === kind &&
          x.result === 'A' &&
          x.invoice === invoice &&
          x.amount === amount &&
          x.fingerprint === instrument.fingerprint &&
          t - x.at < windowMs,
      );
      if (earlier) return gatewayError('Duplicate Transaction');
    }

    const outcome = op === 'save' ? OUTCOME.Success : OUTCOME[instrument.outcome];
    const existingToken = f.get('xtoken') || null;
    let token: string | null = null;
    if (outcome.result === 'A') {
      token = existingToken ?? newToken();
      if (!existingToken) tokens.set(token, instrument);
    }
    const t: Txn = {
      refNum: newRef(),
      kind,
      op,
      invoice,
      amount,
      result: outcome.result,
      status: outcome.status,
      error: outcome.error,
      errorCode: outcome.code,
      token,
      last4: instrument.last4,
      masked: instrument.masked,
      cardType: instrument.cardType,
      fingerprint: instrument.fingerprint,
      at: now(),
      voided: false,
      settled: settleAtOnce,
      refundedCents: 0,
    };
    txns.push(t);
    return txnAnswer(
      t,
      op === 'sale' && t.result === 'A'
        ? { xAuthAmount: amount, ...(kind === 'cc' ? { xAuthCode: String(randomInt(100000, 999999)) } : {}) }
        : {},
    );
  }

  function reportRow(t: Txn): Record<string, string> {
    const command = `${t.kind === 'cc' ? 'CC' : 'Check'}:${t.op.charAt(0).toUpperCase()}${t.op.slice(1)}`;
    return {
      xRefNum: t.refNum,
      xCommand: command,
      xInvoice: t.invoice,
      xAmount: t.amount,
      xRequestAmount: t.amount,
      xResponseResult: t.result === 'A' ? 'Approved' : t.result === 'D' ? 'Declined' : 'Error',
      xResponseError: t.error,
      xErrorCode: t.errorCode,
      xStatus: t.status,
      xToken: t.token ?? '',
      ...(t.kind === 'cc'
        ? { xMaskedCardNumber: t.masked, xCardType: t.cardType, xCardLastFour: t.last4 }
        : { xMaskedAccountNumber: t.masked }),
      xEnteredDate: fmtDate(t.at),
      xVoid: t.voided ? '1' : '0',
    };
  }

  function report(f: Map<string, string>): unknown {
    if (f.get('xkey') !== key) return gatewayError('Specified Key Not Found', '01208');
    for (const required of ['xversion', 'xsoftwarename', 'xsoftwareversion', 'xcommand']) {
      if (!f.get(required)) return gatewayError(`Required: ${required}`);
    }
    const command = (f.get('xcommand') ?? '').toLowerCase();
    const wanted =
      command === 'report:all'
        ? null
        : command === 'report:approved'
          ? 'A'
          : command === 'report:declined'
            ? 'D'
            : undefined;
    if (wanted === undefined) return gatewayError('Invalid Command');
    const begin = parseDate(f.get('xbegindate'));
    const end = parseDate(f.get('xenddate'));
    if (begin === null || end === null) return gatewayError('Invalid Date Range');
    const filters: Array<[string, string]> = [];
    for (const [k, v] of f) {
      if (!REPORT_CONTROL.has(k) && v.startsWith('ai')) filters.push([k, v.slice(2)]);
    }
    const requested = Number(f.get('xmaxrecords') ?? 1000);
    const cap = end - begin <= 24 * 60 * 60 * 1000 ? 5000 : 1000;
    const max = Number.isInteger(requested) && requested >= 1 ? Math.min(requested, cap) : cap;
    const rows = txns
      .filter((t) => t.at >= begin && t.at <= end && (wanted === null || t.result === wanted))
      .map(reportRow)
      .filter((row) => {
        const lower = new Map(Object.entries(row).map(([k, v]) => [k.toLowerCase(), v]));
        return filters.every(([k, v]) => lower.get(k) === v);
      });
    if (isTrue(f.get('xgetnewest'))) rows.reverse();
    const data = rows.slice(0, max);
    return {
      xResult: 'A',
      xStatus: 'Success',
      xError: '',
      xRefNum: newRef(),
      xReportingMaxTransactions: String(max),
      xRecordsReturned: String(data.length),
      xReportData: data,
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('connection', 'close');
    const body = await readBody(req);
    if (fault === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    if (latency > 0) await new Promise((r) => setTimeout(r, latency));
    if (fault === 'http-500') {
      res.writeHead(500, { 'content-type': 'text/plain' });
      res.end('Internal Server Error');
      return;
    }
    const path = new URL(req.url ?? '/', 'http://emulator').pathname.toLowerCase();
    if (req.method !== 'POST' || (path !== '/gatewayjson' && path !== '/reportjson')) {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('Not Found');
      return;
    }
    let fields: Map<string, string> | null = null;
    try {
      const parsed: unknown = JSON.parse(body);
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
        fields = new Map();
        for (const [k, v] of Object.entries(parsed)) {
          if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') {
            fields.set(k.toLowerCase(), String(v));
          }
        }
      }
    } catch {}
    if (fields) {
      const shown: Record<string, string> = {};
      for (const [k, v] of fields) shown[k] = SENSITIVE.has(k) ? mask(k, v) : v;
      received.push({ path, fields: shown });
    }
    const answer = !fields
      ? gatewayError('Invalid Request')
      : path === '/gatewayjson'
        ? gateway(fields)
        : report(fields);
    // Faults read after processing: the request had its effect, only the answer is lost.
    if (fault === 'drop-after-processing') {
      req.socket.destroy();
      return;
    }
    if (fault === 'malformed') {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<html><body>Service Unavailable</body></html>');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(answer));
  }

  const server = createServer((req, res) => {
    requestCount++;
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const stopListening = () =>
    new Promise<void>((resolve) => {
      if (!server.listening) return resolve();
      server.close(() => resolve());
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
    });
  const listenAgain = () =>
    new Promise<void>((resolve, reject) => {
      if (server.listening) return resolve();
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });

  return {
    url: `${origin}/gatewayjson`,
    reportUrl: `${origin}/reportjson`,
    key,
    charges(invoice) {
      return txns
        .filter((t) => t.op === 'sale' && (invoice === undefined || t.invoice === invoice))
        .map(
          (t): SolaCharge => ({
            refNum: t.refNum,
            command: t.kind === 'cc' ? 'cc:sale' : 'check:sale',
            invoice: t.invoice,
            amount: t.amount,
            result: t.result,
            last4: t.last4,
            token: t.token,
            voided: t.voided,
            at: new Date(t.at),
          }),
        );
    },
    refunds() {
      return txns
        .filter((t) => t.op === 'refund')
        .map(
          (t): SolaRefund => ({
            refNum: t.refNum,
            command: t.kind === 'cc' ? 'cc:refund' : 'check:refund',
            original: t.original ?? '',
            invoice: t.invoice,
            amount: t.amount,
            at: new Date(t.at),
          }),
        );
    },
    settle() {
      for (const t of txns) if (t.op === 'sale') t.settled = true;
    },
    received: () => received.map((r) => ({ path: r.path, fields: { ...r.fields } })),
    requests: () => requestCount,
    setLatency(ms) {
      latency = Math.max(0, ms);
    },
    async setFault(kind) {
      fault = kind;
      if (kind === 'refuse') await stopListening();
      else await listenAgain();
      if (kind !== 'hang') {
        for (const res of hanging) res.destroy();
      }
    },
    async close() {
      fault = null;
      await stopListening();
    },
  };
}
