/**
 * Receipts: queued in the transaction that records a payment (or its void), rendered when sent
 * (so a receipt always says what is recorded), downloadable as PDF, resendable; year-end
 * statements per donor and year.
 */
import type {
  DeviceReceiptSettings,
  ReceiptDelivery,
  ReceiptDeliveryStatus,
  ReceiptKind,
  ReceiptLanguage,
  ReceiptSendResponse,
} from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, validationError } from '../http/errors.ts';
import { findOrgByGuid, findOrgById, type Org } from '../orgs/repo.ts';
import type { OrgSettings } from '../orgs/settings.ts';
import { assertSameOrg } from '../payments/payment-service.ts';
import { maskEmail } from '../people/contact-mask.ts';
import type { Person } from '../people/repo.ts';
import { inThisThread, pdfPool } from './pdf-pool.ts';
import {
  type ReceiptDocument,
  receiptDocument,
  receiptLanguage,
  receiptSubject,
  receiptsEnabled,
  statementDocument,
  taxStatement,
} from './receipt-content.ts';
import { receiptHtml, receiptText } from './receipt-mail.ts';
import { renderPdf } from './receipt-pdf.ts';
import {
  type DeliveryRow,
  findDelivery,
  findDonorByAccount,
  findPendingCopy,
  giftsOfYear,
  insertCorrections,
  insertDelivery,
  listDeliveries,
  loadReceiptPayment,
  type ReceiptPayment,
  type StatementDonor,
} from './repo.ts';

/** Where a payment's receipt should go when it succeeds (a device's donor typed it), and in what language. */
export interface ReceiptAsk {
  email: string | null;
  language: ReceiptLanguage | null;
}

const pdfSize = (settings: OrgSettings) => (settings.il ? 'A4' : 'LETTER');

/**
 * In the transaction recording a successful payment: its receipt e-mail, when receipts are on and
 * there is an address (the one asked for, else the donor's first). Nothing is sent here.
 */
export async function queueReceipt(
  tx: Sql,
  org: { id: number; settings: OrgSettings },
  paymentId: number,
  donor: Pick<Person, 'emails' | 'firstName' | 'lastName' | 'firstNameHebrew' | 'lastNameHebrew'> | null,
  ask: ReceiptAsk | null | undefined,
  at: Date,
): Promise<void> {
  if (!receiptsEnabled(org.settings)) return;
  const to = ask?.email ?? donor?.emails.find((e) => e.emailAddress)?.emailAddress ?? null;
  if (!to) return;
  const language = receiptLanguage(ask?.language, donor && { accountNum: '', ...donor }, org.settings.il);
  await insertDelivery(tx, {
    orgId: org.id,
    paymentId,
    donorId: null,
    year: null,
    kind: 'receipt',
    to,
    language,
    at,
  });
}

/** In the void's (or refund's) transaction: a corrected receipt to wherever the receipt went. */
export const queueCorrections = (
  tx: Sql,
  paymentId: number,
  at: Date,
  refundId: number | null = null,
): Promise<number> => insertCorrections(tx, paymentId, at, refundId);

export function toDeliveryView(d: DeliveryRow): ReceiptDelivery {
  return {
    deliveryId: d.id,
    kind: d.kind,
    receiptNum: d.receiptNum,
    donorId: d.donorAccount,
    year: d.year,
    email: maskEmail(d.to),
    language: d.language,
    status: d.status,
    attempts: d.attempts,
    lastError: d.lastError,
    createdAt: d.createdAt.toISOString(),
    sentAt: d.sentAt?.toISOString() ?? null,
    nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt.toISOString() : null,
  };
}

async function paymentOf(deps: Deps, org: Org, receiptNum: string): Promise<ReceiptPayment> {
  const payment = await loadReceiptPayment(deps.db, org.id, receiptNum);
  // Declined, failed and pending payments have no receipt: the same 404 as an unknown one.
  if (!payment) throw notFound(`A receipt for payment ${receiptNum}`);
  return payment;
}

/** The receipt as it stands: a voided or refunded payment's is the corrected one. */
function documentOf(payment: ReceiptPayment, org: Org, language: ReceiptLanguage, kind: ReceiptKind) {
  const k = payment.facts.status !== 'Success' ? 'correction' : kind === 'annual' ? 'receipt' : kind;
  return receiptDocument(payment.facts, org, language, k);
}

const languageFor = (asked: ReceiptLanguage | null | undefined, payment: ReceiptPayment, org: Org) =>
  receiptLanguage(asked, payment.facts.donor, org.settings.il);

/** `GET /v1/External/Payments/{receiptNum}/Receipt`: the PDF (also when e-mail is not configured). */
export async function receiptPdf(
  deps: Deps,
  caller: Caller,
  receiptNum: string,
  language: ReceiptLanguage | null,
): Promise<{ pdf: Buffer; filename: string }> {
  const payment = await paymentOf(deps, caller.org, receiptNum);
  const lang = languageFor(language, payment, caller.org);
  const pdf = await renderPdf(documentOf(payment, caller.org, lang, 'receipt'), {
    size: pdfSize(caller.org.settings),
  });
  return { pdf, filename: `receipt-${payment.facts.receiptNum}-${lang}.pdf` };
}

function refuseWhenOff(org: Org): void {
  if (!receiptsEnabled(org.settings)) {
    throw new ApiError(
      409,
      ERROR_CODES.INVALID_STATE,
      'Receipts are turned off for this organisation (or its legal name and tax id are not set): nothing is e-mailed',
    );
  }
}

/** Queue a copy of a payment's receipt to an address (a waiting copy to the same address is reused). */
async function queueCopy(
  deps: Deps,
  org: Org,
  payment: ReceiptPayment,
  to: string,
  language: ReceiptLanguage,
): Promise<ReceiptSendResponse> {
  refuseWhenOff(org);
  const id = await deps.db.transaction(async (tx) => {
    const inserted = await insertDelivery(tx, {
      orgId: org.id,
      paymentId: payment.id,
      donorId: null,
      year: null,
      kind: 'copy',
      to,
      language,
      at: deps.now(),
    });
    return inserted ?? (await findPendingCopy(tx, payment.id, to))?.id ?? null;
  });
  const delivery = id === null ? null : await findDelivery(deps.db, org.id, id);
  if (!delivery) throw new Error(`the copy of ${payment.facts.receiptNum} to be sent was not found`);
  return { receiptNum: payment.facts.receiptNum, delivery: toDeliveryView(delivery) };
}

/** `POST /v1/External/Payments/{receiptNum}/Receipt/Send`: to the donor, or to the address given. */
export async function resendReceipt(
  deps: Deps,
  caller: Caller,
  receiptNum: string,
  req: { orgGuid: string; email: string | null; language: ReceiptLanguage | null },
): Promise<ReceiptSendResponse> {
  assertSameOrg(caller, req.orgGuid);
  const payment = await paymentOf(deps, caller.org, receiptNum);
  const to = req.email ?? (payment.facts.isAnonymous ? undefined : payment.donorEmails[0]);
  if (!to) {
    throw validationError([
      { field: 'email', message: 'is required: the payment has no donor with an e-mail address' },
    ]);
  }
  return queueCopy(deps, caller.org, payment, to, languageFor(req.language, payment, caller.org));
}

/**
 * `POST /v1/Device/Receipt/Send`: a receipt of a payment this very device took, to the address the
 * donor gave on it (any other payment: 404, as if unknown).
 */
export async function deviceSendReceipt(
  deps: Deps,
  caller: Caller,
  req: { receiptNum: string; email: string; language?: ReceiptLanguage | undefined },
): Promise<ReceiptSendResponse> {
  const payment = await loadReceiptPayment(deps.db, caller.org.id, req.receiptNum);
  if (!payment || caller.type !== 'source' || payment.sourceId !== caller.id) {
    throw notFound(`A receipt for payment ${req.receiptNum} taken on this device`);
  }
  return queueCopy(deps, caller.org, payment, req.email, languageFor(req.language, payment, caller.org));
}

/**
 * A device operation's receipt (`receiptEmail` on a charge or schedule this device pushed), once:
 * on a replay the payment is already recorded, so it is queued here if it was not with it.
 */
export async function queueDeviceReceipt(
  deps: Deps,
  caller: Caller,
  receiptNum: string,
  ask: ReceiptAsk,
): Promise<void> {
  if (!ask.email || !receiptsEnabled(caller.org.settings)) return;
  const payment = await loadReceiptPayment(deps.db, caller.org.id, receiptNum);
  if (payment?.facts.status !== 'Success' || payment.sourceId !== caller.id) return;
  await insertDelivery(deps.db, {
    orgId: caller.org.id,
    paymentId: payment.id,
    donorId: null,
    year: null,
    kind: 'receipt',
    to: ask.email,
    language: languageFor(ask.language, payment, caller.org),
    at: deps.now(),
  });
}

/** The organisation's receipt details as terminals print them (device settings). */
export function deviceReceiptSettingsOf(org: Org): DeviceReceiptSettings {
  const r = org.settings.receipts;
  return {
    enabled: receiptsEnabled(org.settings),
    legalName: r.legalName ?? null,
    address: r.address ?? null,
    taxId: r.taxId ?? null,
    statement: { en: taxStatement(org, 'en'), he: taxStatement(org, 'he') },
  };
}

export async function listReceiptDeliveries(
  deps: Deps,
  caller: Caller,
  q: {
    orgGuid?: string | undefined;
    orgGUID?: string | undefined;
    status?: ReceiptDeliveryStatus | undefined;
    receiptNum?: string | undefined;
    limit: number;
  },
): Promise<{ deliveries: ReceiptDelivery[] }> {
  const named = q.orgGuid ?? q.orgGUID;
  if (named) assertSameOrg(caller, named);
  const rows = await listDeliveries(deps.db, caller.org.id, q);
  return { deliveries: rows.map(toDeliveryView) };
}

/** The admin view (CLI `receipts list`): an organisation's receipt e-mails by status. */
export async function orgReceiptDeliveries(
  deps: Deps,
  orgGuid: string,
  q: { status?: ReceiptDeliveryStatus | undefined; limit: number },
): Promise<{ orgGuid: string; deliveries: ReceiptDelivery[] }> {
  const org = await findOrgByGuid(deps.db, orgGuid);
  if (!org) throw notFound(`Organisation ${orgGuid}`);
  const rows = await listDeliveries(deps.db, org.id, q);
  return { orgGuid: org.guid, deliveries: rows.map(toDeliveryView) };
}

export interface RenderedMail {
  subject: string;
  html: string;
  text: string;
  attachment: { filename: string; content: Buffer };
}

/** What a delivery sends, as recorded now (null: its payment or donor is gone). */
export async function renderDelivery(deps: Deps, d: DeliveryRow): Promise<RenderedMail | null> {
  const org = await findOrgById(deps.db, d.orgId);
  if (!org) return null;
  let doc: ReceiptDocument;
  let filename: string;
  if (d.kind === 'annual') {
    if (d.donorAccount === null || d.year === null) return null;
    const donor = await findDonorByAccount(deps.db, org.id, d.donorAccount);
    if (!donor) return null;
    const [entry] = await giftsOfYear(deps.db, org.id, d.year, org.settings.timezone, donor.id);
    doc = statementDocument(donor, entry?.gifts ?? [], d.year, org, d.language);
    filename = `statement-${d.year}-${donor.accountNum}-${d.language}.pdf`;
  } else {
    if (d.receiptNum === null) return null;
    const payment = await loadReceiptPayment(deps.db, org.id, d.receiptNum);
    if (!payment) return null;
    doc = documentOf(payment, org, d.language, d.kind);
    filename = `receipt-${payment.facts.receiptNum}-${d.language}.pdf`;
  }
  const pdf = await renderPdf(doc, { size: pdfSize(org.settings) });
  return {
    subject: receiptSubject(doc, d.kind, d.receiptNum),
    html: receiptHtml(doc),
    text: receiptText(doc),
    attachment: { filename, content: pdf },
  };
}

// ---------------------------------------------------------------------------------------------
// Year-end statements

const statementLanguage = (asked: ReceiptLanguage | null | undefined, donor: StatementDonor, org: Org) =>
  receiptLanguage(asked, donor, org.settings.il);

/** `GET /v1/External/Donors/{accountNum}/Statements/{year}`: the donor's year-end statement (PDF). */
export async function statementPdf(
  deps: Deps,
  caller: Caller,
  accountNum: string,
  year: number,
  language: ReceiptLanguage | null,
): Promise<{ pdf: Buffer; filename: string }> {
  const org = caller.org;
  const donor = await findDonorByAccount(deps.db, org.id, accountNum);
  if (!donor) throw notFound(`Donor ${accountNum}`);
  const [entry] = await giftsOfYear(deps.db, org.id, year, org.settings.timezone, donor.id);
  const lang = statementLanguage(language, donor, org);
  const pdf = await renderPdf(statementDocument(donor, entry?.gifts ?? [], year, org, lang), {
    size: pdfSize(org.settings),
  });
  return { pdf, filename: `statement-${year}-${donor.accountNum}-${lang}.pdf` };
}

export interface AnnualSummary {
  orgGuid: string;
  year: number;
  /** Donors who gave in the year (a statement each). */
  donors: number;
  gifts: number;
  /** Bytes of all the statements generated. */
  bytes: number;
  /** Statements queued for e-mail by this run (`send`); already queued before: not again. */
  queued: number;
  alreadyQueued: number;
  /** Donors with no e-mail address: their statements are downloadable only. */
  withoutEmail: string[];
  /** Worker threads that drew the PDFs (0: the server's own thread). */
  threads: number;
  seconds: number;
}

/**
 * Every year-end statement of an organisation's year: each generated (so a statement that cannot
 * be drawn fails here, not in the mailer), and with `send` queued for e-mail once per donor, year
 * and address (running it again queues nothing twice).
 */
export async function annualStatements(
  deps: Deps,
  orgGuid: string,
  year: number,
  opts: {
    send: boolean;
    /** Worker threads drawing the PDFs (default: one per core; 0: this thread). */
    threads?: number;
    onStatement?: (accountNum: string, pdf: Buffer) => void | Promise<void>;
  },
): Promise<AnnualSummary> {
  const started = performance.now();
  const org = await findOrgByGuid(deps.db, orgGuid);
  if (!org) throw notFound(`Organisation ${orgGuid}`);
  if (opts.send) refuseWhenOff(org);
  const all = await giftsOfYear(deps.db, org.id, year, org.settings.timezone);
  const size = pdfSize(org.settings);
  let bytes = 0;
  let gifts = 0;
  // Every core draws (worker threads), a bounded number of documents in flight.
  const renderer = opts.threads === 0 ? inThisThread() : await pdfPool(opts.threads);
  const threads = renderer.threads;
  try {
    let next = 0;
    const lane = async () => {
      for (let i = next++; i < all.length; i = next++) {
        const { donor, gifts: list } = all[i]!;
        gifts += list.length;
        const doc = statementDocument(donor, list, year, org, statementLanguage(null, donor, org));
        const pdf = await renderer.render(doc, { size, bold: false });
        bytes += pdf.length;
        await opts.onStatement?.(donor.accountNum, pdf);
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, renderer.threads * 4) }, lane));
  } finally {
    await renderer.close();
  }
  let queued = 0;
  let alreadyQueued = 0;
  const withoutEmail: string[] = [];
  if (opts.send) {
    const at = deps.now();
    // One transaction per batch of donors: a big year does not hold one transaction for minutes.
    for (let i = 0; i < all.length; i += 500) {
      await deps.db.transaction(async (tx) => {
        for (const { donor } of all.slice(i, i + 500)) {
          const to = donor.emails[0];
          if (!to) {
            withoutEmail.push(donor.accountNum);
            continue;
          }
          const id = await insertDelivery(tx, {
            orgId: org.id,
            paymentId: null,
            donorId: donor.id,
            year,
            kind: 'annual',
            to,
            language: statementLanguage(null, donor, org),
            at,
          });
          if (id === null) alreadyQueued++;
          else queued++;
        }
      });
    }
  } else {
    for (const { donor } of all) if (!donor.emails[0]) withoutEmail.push(donor.accountNum);
  }
  return {
    orgGuid: org.guid,
    year,
    donors: all.length,
    gifts,
    bytes,
    queued,
    alreadyQueued,
    withoutEmail,
    threads,
    seconds: Math.round((performance.now() - started) / 10) / 100,
  };
}
