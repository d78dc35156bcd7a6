/**
 * The read API: payments (a page, one payment, a CSV export), totals and donors, each scoped to
 * the API key's organisation. Bad input is a 400 naming the parameter before any query runs.
 */
import {
  type DonorDetail,
  type FieldError,
  fromMinorUnits,
  isRealDate,
  type PaymentDetail,
  type PaymentList,
  type PaymentListQuery,
  type PaymentSummary,
  type ShiftList,
  type TotalsGroup,
  type TotalsResponse,
  toMinorUnits,
} from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import { listShifts } from '../devices/shift-repo.ts';
import { notFound, validationError } from '../http/errors.ts';
import { money, personName } from '../outbox/payloads.ts';
import { assertSameOrg } from '../payments/payment-service.ts';
import { toRecord } from '../people/people-service.ts';
import { findPeopleByIds, findPerson } from '../people/repo.ts';
import { listScheduleSummaries } from '../schedules/repo.ts';
import { toScheduleSummary } from '../schedules/schedule-management.ts';
import {
  donorYearTotals,
  findPaymentRow,
  listPaymentRows,
  type PageKey,
  type PaymentFilter,
  type PaymentRow,
  paymentDeliveries,
  paymentReasons,
  paymentRefunds,
  resolveRange,
  searchDonorIds,
  type TotalsRowRaw,
  totals,
} from './repo.ts';

type OrgParams = { orgGuid?: string | undefined; orgGUID?: string | undefined };

/** orgGuid (or orgGUID) is optional on reads; when sent it must be the key's organisation. */
function checkOrg(caller: Caller, q: OrgParams): void {
  if (q.orgGuid && q.orgGUID && q.orgGuid.toLowerCase() !== q.orgGUID.toLowerCase()) {
    throw validationError([{ field: 'orgGuid', message: 'orgGuid and orgGUID differ; send one' }]);
  }
  const org = q.orgGuid ?? q.orgGUID;
  if (org) assertSameOrg(caller, org);
}

const tzOf = (caller: Caller) => caller.org.settings.timezone;

/** The calendar part of a bound must be a real date (2026-02-30 is a 400, not a database error). */
function checkInstant(field: string, value: string | undefined, errors: FieldError[]): void {
  if (value === undefined) return;
  const [y, m, d] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const time = /[T ](\d{2}):(\d{2})(?::(\d{2}))?/.exec(value);
  const timeOk = !time || (Number(time[1]) < 24 && Number(time[2]) < 60 && Number(time[3] ?? 0) < 60);
  if (!isRealDate(y, m, d) || !timeOk || Number.isNaN(Date.parse(value.replace(' ', 'T')))) {
    errors.push({ field, message: `${value} is not a real date or time` });
  }
}

async function checkedRange(
  deps: Deps,
  caller: Caller,
  from: string | undefined,
  to: string | undefined,
): Promise<{ from: Date | null; to: Date | null }> {
  const errors: FieldError[] = [];
  checkInstant('from', from, errors);
  checkInstant('to', to, errors);
  if (errors.length > 0) throw validationError(errors);
  const range = await resolveRange(deps.db, tzOf(caller), from ?? null, to ?? null);
  if (range.from && range.to && range.from.getTime() >= range.to.getTime()) {
    throw validationError([{ field: 'to', message: 'must be after from' }]);
  }
  return range;
}

// ---------------------------------------------------------------------------------------------
// Cursors: opaque to callers; base64url of "<created_at in UTC, microseconds>|<id>".

const CURSOR = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6})\|(\d{1,15})$/;

export const encodeCursor = (k: PageKey): string =>
  Buffer.from(`${k.createdAt}|${k.id}`).toString('base64url');

const badCursor = () =>
  validationError([{ field: 'cursor', message: 'is not a cursor this API gave (use nextCursor as given)' }]);

/** The text of a cursor this API gave (base64url) matched against `form`, else a 400 naming it. */
function cursorMatch(cursor: string, form: RegExp): RegExpExecArray {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, 'base64url').toString('utf8') : '';
  const m = form.exec(text);
  if (!m) throw badCursor();
  return m;
}

function decodeCursor(cursor: string | undefined): PageKey | null {
  if (cursor === undefined) return null;
  const m = cursorMatch(cursor, CURSOR);
  const [y, mo, d] = m[1]!.slice(0, 10).split('-').map(Number) as [number, number, number];
  // A real calendar date too: PostgreSQL would fail on 2026-13-40.
  if (!isRealDate(y, mo, d)) throw badCursor();
  return { createdAt: m[1]!, id: Number(m[2]) };
}

const idCursor = (id: number) => Buffer.from(`d|${id}`).toString('base64url');
const decodeIdCursor = (cursor: string | undefined): number =>
  cursor === undefined ? 0 : Number(cursorMatch(cursor, /^d\|(\d{1,15})$/)[1]);

// ---------------------------------------------------------------------------------------------
// Payments

/** A party's name for reports: null when there is no party or no name. */
const nameOf = (p: Parameters<typeof personName>[0] | null): string | null =>
  p ? personName(p) || null : null;

export function toSummary(r: PaymentRow): PaymentSummary {
  return {
    receiptNum: r.receiptNum,
    status: r.status,
    amount: fromMinorUnits(r.amountMinor),
    amountMinor: r.amountMinor,
    currency: r.currency,
    paymentMethod: r.method,
    createdAt: r.createdAt.toISOString(),
    processedAt: r.processedAt.toISOString(),
    donorId: r.donor?.accountNum ?? null,
    donorName: r.isAnonymous ? null : nameOf(r.donor),
    collectorId: r.collector?.accountNum ?? null,
    collectorName: nameOf(r.collector),
    campaignNumber: r.campaignNumber,
    reasonNumbers: r.reasonNumbers,
    scheduleNum: r.scheduleNum,
    instalment: r.instalment,
    source: r.source,
    deviceId: r.deviceId,
    deviceName: r.deviceName,
    brand: r.brand,
    last4Digits: r.last4,
    voidedAt: r.voidedAt?.toISOString() ?? null,
    refundedAmount: fromMinorUnits(r.refundedMinor),
    refundedMinor: r.refundedMinor,
    errorCode: r.errorCode,
  };
}

interface Filtered {
  filter: PaymentFilter;
  after: PageKey | null;
}

async function paymentFilter(deps: Deps, caller: Caller, q: PaymentListQuery): Promise<Filtered> {
  checkOrg(caller, q);
  const minMinor = q.minAmount === undefined ? null : toMinorUnits(Number(q.minAmount));
  const maxMinor = q.maxAmount === undefined ? null : toMinorUnits(Number(q.maxAmount));
  if (minMinor !== null && maxMinor !== null && minMinor > maxMinor) {
    throw validationError([{ field: 'maxAmount', message: 'must be at least minAmount' }]);
  }
  const after = decodeCursor(q.cursor);
  const range = await checkedRange(deps, caller, q.from, q.to);
  const q2 = q.q?.trim();
  return {
    after,
    filter: {
      from: range.from,
      to: range.to,
      status: q.status ?? null,
      method: q.method ?? null,
      currency: q.currency ?? null,
      source: q.source ?? null,
      deviceId: q.deviceId ?? null,
      collectorId: q.collectorId ?? null,
      campaignNumber: q.campaignNumber ?? null,
      reasonNumber: q.reasonNumber ?? null,
      donorId: q.donorId ?? null,
      scheduleNum: q.scheduleNum ?? null,
      minMinor,
      maxMinor,
      q: q2 ? q2 : null,
    },
  };
}

/** `narrow`: more conditions a caller adds to the query's (the console's resolved search). */
export async function listPayments(
  deps: Deps,
  caller: Caller,
  q: PaymentListQuery,
  narrow: Pick<PaymentFilter, 'receiptNum' | 'donorIds'> = {},
): Promise<PaymentList> {
  const { filter: asked, after } = await paymentFilter(deps, caller, q);
  const filter = { ...asked, ...narrow };
  const rows = await listPaymentRows(deps.db, caller.org.id, filter, after, q.limit + 1);
  const page = rows.slice(0, q.limit);
  const last = page.at(-1);
  return {
    payments: page.map(toSummary),
    nextCursor:
      rows.length > q.limit && last ? encodeCursor({ createdAt: last.createdKey, id: last.id }) : null,
  };
}

// CSV: the columns of the export, in order. Text that a spreadsheet would run as a formula
// (starting with = + - @, tab or carriage return) is prefixed with an apostrophe.
const CSV_COLUMNS: [string, (r: PaymentRow) => string | number | null][] = [
  ['receiptNum', (r) => r.receiptNum],
  ['createdAt', (r) => r.createdAt.toISOString()],
  ['status', (r) => r.status],
  ['amount', (r) => money(r.amountMinor)],
  ['currency', (r) => r.currency],
  ['paymentMethod', (r) => r.method],
  ['donorId', (r) => r.donor?.accountNum ?? null],
  ['donorName', (r) => (r.isAnonymous ? null : nameOf(r.donor))],
  [
    'donorNameHebrew',
    (r) =>
      r.isAnonymous || !r.donor
        ? null
        : [r.donor.firstNameHebrew, r.donor.lastNameHebrew].filter(Boolean).join(' ') || null,
  ],
  ['collectorId', (r) => r.collector?.accountNum ?? null],
  ['collectorName', (r) => nameOf(r.collector)],
  ['campaignNumber', (r) => r.campaignNumber],
  ['campaignName', (r) => r.campaignName],
  ['reasonNumbers', (r) => r.reasonNumbers.join(' ')],
  ['scheduleNum', (r) => r.scheduleNum],
  ['instalment', (r) => r.instalment],
  ['source', (r) => r.source],
  ['deviceId', (r) => r.deviceId],
  ['deviceName', (r) => r.deviceName],
  ['brand', (r) => r.brand],
  ['last4Digits', (r) => r.last4],
  ['gatewayRefNum', (r) => r.gatewayRef],
  ['voidedAt', (r) => r.voidedAt?.toISOString() ?? null],
  ['refundedAmount', (r) => money(r.refundedMinor)],
  ['errorCode', (r) => r.errorCode],
];

export function csvField(v: string | number | null): string {
  if (v === null) return '';
  let s = String(v);
  if (typeof v === 'string' && /^[=+\-@\t\r]/.test(s)) s = `'${s}`;
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

const CSV_PAGE = 1000;

/**
 * Every payment the query matches (limit and cursor apply as on the JSON list: the export starts
 * after the cursor; `limit` is ignored, every row is sent), as CSV lines, a page of rows at a time.
 * The filter is checked before the first byte, so a bad query is still a 400.
 */
export async function paymentsCsv(
  deps: Deps,
  caller: Caller,
  q: PaymentListQuery,
  narrow: Pick<PaymentFilter, 'receiptNum' | 'donorIds'> = {},
): Promise<AsyncGenerator<string>> {
  const { filter: asked, after: start } = await paymentFilter(deps, caller, q);
  const filter = { ...asked, ...narrow };
  const orgId = caller.org.id;
  async function* lines() {
    yield `\uFEFF${CSV_COLUMNS.map(([name]) => name).join(',')}\r\n`;
    let after = start;
    for (;;) {
      const rows = await listPaymentRows(deps.db, orgId, filter, after, CSV_PAGE);
      if (rows.length === 0) return;
      yield rows.map((r) => `${CSV_COLUMNS.map(([, get]) => csvField(get(r))).join(',')}\r\n`).join('');
      if (rows.length < CSV_PAGE) return;
      const last = rows.at(-1)!;
      after = { createdAt: last.createdKey, id: last.id };
    }
  }
  return lines();
}

export async function getPayment(
  deps: Deps,
  caller: Caller,
  receiptNum: string,
  q: OrgParams,
): Promise<PaymentDetail> {
  checkOrg(caller, q);
  const row = await findPaymentRow(deps.db, caller.org.id, receiptNum);
  if (!row) throw notFound(`Payment ${receiptNum}`);
  const [reasons, deliveries, refunds] = await Promise.all([
    paymentReasons(deps.db, row.id),
    paymentDeliveries(deps.db, caller.org.id, receiptNum),
    paymentRefunds(deps.db, row.id),
  ]);
  return {
    ...toSummary(row),
    paymentDate: row.paymentDate.toISOString(),
    uniqueTransactionId: row.uniqueTransactionId,
    note: row.note,
    isAnonymous: row.isAnonymous,
    cardHolderName: row.cardHolderName,
    donor: row.donor,
    donorCreated: row.donorCreated,
    collector: row.collector,
    campaign:
      row.campaignNumber === null
        ? null
        : { campaignNumber: row.campaignNumber, campaignName: row.campaignName },
    reasons: reasons.map((r) => ({
      reasonNumber: r.number,
      reasonName: r.name,
      reasonNameHebrew: r.nameHebrew,
      amount: fromMinorUnits(r.amountMinor),
      amountMinor: r.amountMinor,
    })),
    device: row.device
      ? {
          deviceName: row.device.deviceName ?? null,
          timezone: row.device.timezone ?? null,
          deviceCreatedDate: row.device.deviceCreatedDate ?? null,
          location: row.device.location ?? null,
        }
      : null,
    gateway: { gatewayName: row.gatewayName, gatewayRefNum: row.gatewayRef, errorMessage: row.errorMessage },
    voidReason: row.voidReason,
    refunds: refunds.map((r) => ({
      refundId: r.id,
      status: r.status,
      amount: fromMinorUnits(r.amountMinor),
      amountMinor: r.amountMinor,
      reason: r.reason,
      actor: r.actor,
      gatewayRefNum: r.gatewayRef,
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      createdAt: r.createdAt.toISOString(),
      resolvedAt: r.resolvedAt?.toISOString() ?? null,
    })),
    webhooks: deliveries.map((d) => ({
      eventId: d.eventId,
      eventType: d.eventType,
      url: d.url,
      status: d.status,
      attempts: d.attempts,
      lastStatusCode: d.lastStatusCode,
      lastError: d.lastError,
      createdAt: d.createdAt.toISOString(),
      deliveredAt: d.deliveredAt?.toISOString() ?? null,
    })),
  };
}

// ---------------------------------------------------------------------------------------------
// Totals

const counted = (count: number, minor: number) => ({
  count,
  amount: fromMinorUnits(minor),
  amountMinor: minor,
});
const toTotalsRow = (r: TotalsRowRaw) => ({
  key: r.key,
  label: r.label,
  currency: r.currency,
  succeeded: counted(r.sCount, r.sMinor),
  voided: counted(r.vCount, r.vMinor),
  refunded: counted(r.rCount, r.rMinor),
  net: { amount: fromMinorUnits(r.sMinor - r.rMinor), amountMinor: r.sMinor - r.rMinor },
  declined: counted(r.dCount, r.dMinor),
  failed: counted(r.eCount, r.eMinor),
});

export async function getTotals(
  deps: Deps,
  caller: Caller,
  q: OrgParams & { from: string; to: string; groupBy: TotalsGroup },
): Promise<TotalsResponse> {
  checkOrg(caller, q);
  const range = await checkedRange(deps, caller, q.from, q.to);
  const from = range.from!;
  const to = range.to!;
  const result = await totals(deps.db, caller.org.id, from, to, q.groupBy);
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    timezone: tzOf(caller),
    groupBy: q.groupBy,
    groups: result.groups.map(toTotalsRow),
    totals: result.totals.map(toTotalsRow),
  };
}

// ---------------------------------------------------------------------------------------------
// Donors

export async function searchDonors(
  deps: Deps,
  caller: Caller,
  q: OrgParams & { search?: string | undefined; limit: number; cursor?: string | undefined },
) {
  checkOrg(caller, q);
  const afterId = decodeIdCursor(q.cursor);
  const ids = await searchDonorIds(deps.db, caller.org.id, (q.search ?? '').trim(), afterId, q.limit + 1);
  const page = ids.slice(0, q.limit);
  const people = await findPeopleByIds(deps.db, 'donor', page);
  return {
    donors: people.map((p) => toRecord('donor', caller.org.guid, p)),
    nextCursor: ids.length > q.limit ? idCursor(page.at(-1)!) : null,
  };
}

const NO_FILTER: Omit<PaymentFilter, 'donorId'> = {
  from: null,
  to: null,
  status: null,
  method: null,
  currency: null,
  source: null,
  deviceId: null,
  collectorId: null,
  campaignNumber: null,
  reasonNumber: null,
  scheduleNum: null,
  minMinor: null,
  maxMinor: null,
  q: null,
};

export async function getDonor(
  deps: Deps,
  caller: Caller,
  accountNum: string,
  q: OrgParams,
): Promise<DonorDetail> {
  checkOrg(caller, q);
  const donor = await findPerson(deps.db, 'donor', caller.org.id, accountNum);
  if (!donor) throw notFound(`Donor ${accountNum}`);
  const tz = tzOf(caller);
  const [years, payments, schedules] = await Promise.all([
    donorYearTotals(deps.db, caller.org.id, donor.id, tz),
    listPaymentRows(deps.db, caller.org.id, { ...NO_FILTER, donorId: donor.accountNum }, null, 50),
    listScheduleSummaries(deps.db, caller.org.id, { donorAccount: donor.accountNum, limit: 500 }),
  ]);
  return {
    donor: toRecord('donor', caller.org.guid, donor),
    totalsByYear: years.map((y) => ({
      year: y.year,
      currency: y.currency,
      count: y.count,
      amount: fromMinorUnits(y.amountMinor),
      amountMinor: y.amountMinor,
    })),
    payments: payments.map(toSummary),
    schedules: schedules.map(toScheduleSummary),
  };
}

// ---------------------------------------------------------------------------------------------
// Shift closes

export async function getShifts(
  deps: Deps,
  caller: Caller,
  q: OrgParams & {
    deviceId?: string | undefined;
    from?: string | undefined;
    to?: string | undefined;
    limit: number;
  },
): Promise<ShiftList> {
  checkOrg(caller, q);
  const range = await checkedRange(deps, caller, q.from, q.to);
  const rows = await listShifts(deps.db, caller.org.id, {
    deviceId: q.deviceId ?? null,
    from: range.from,
    to: range.to,
    limit: q.limit,
  });
  return {
    shifts: rows.map((r) => ({
      closeId: r.closeId,
      deviceId: r.deviceId,
      deviceName: r.deviceName,
      openedAt: r.openedAt.toISOString(),
      closedAt: r.closedAt.toISOString(),
      closedBy: r.closedBy,
      recordedAt: r.recordedAt.toISOString(),
      device: r.device,
      server: r.server,
    })),
  };
}
