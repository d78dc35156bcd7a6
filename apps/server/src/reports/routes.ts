/**
 * The read API for reporting and reconciliation (API key; every query scoped to the key's
 * organisation): payments, one payment, totals, donors.
 */

import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import {
  donorDetail,
  donorList,
  donorSearchQuery,
  paymentDetail,
  paymentList,
  paymentListQuery,
  shiftList,
  shiftListQuery,
  str,
  totalsQuery,
  totalsResponse,
} from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import { csvDownload } from '../http/csv-download.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonOk } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import {
  getDonor,
  getPayment,
  getShifts,
  getTotals,
  listPayments,
  paymentsCsv,
  searchDonors,
} from './report-service.ts';

const orgQuery = z.strictObject({
  orgGuid: paymentListQuery.shape.orgGuid,
  orgGUID: paymentListQuery.shape.orgGUID,
});

const READ_ERRORS = {
  400: ERROR_RESPONSES[400],
  401: ERROR_RESPONSES[401],
  403: ERROR_RESPONSES[403],
  413: ERROR_RESPONSES[413],
  429: ERROR_RESPONSES[429],
  500: ERROR_RESPONSES[500],
} as const;

/** Does the request ask for CSV (and not JSON first)? */
export function wantsCsv(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
      return { type: type.trim(), q: q ? Number(q.slice(2)) : 1 };
    })
    .filter((t) => t.q > 0)
    .sort((a, b) => b.q - a.q);
  const csv = types.find((t) => t.type === 'text/csv');
  const json = types.find(
    (t) => t.type === 'application/json' || t.type === '*/*' || t.type === 'application/*',
  );
  return csv !== undefined && (json === undefined || csv.q > json.q || types[0] === csv);
}

export function reportRoutes(buckets: TokenBuckets) {
  const apiKeyOnly = authenticate({ source: false, apiKey: true }, buckets);
  const payments = createRoute({
    method: 'get',
    path: '/v1/External/Payments',
    tags: ['Reports'],
    summary: 'List payments, newest first, with filters (or export them as CSV)',
    description:
      "The organisation's payments, newest first, a page at a time: pass the answer's nextCursor as cursor " +
      'for the next page (null on the last). Filters combine (AND). With `Accept: text/csv` the answer is a ' +
      'CSV file of every matching payment (not one page), streamed, UTF-8 with a byte-order mark so ' +
      'spreadsheets read Hebrew names correctly. Unknown query parameters are a 400 UNKNOWN_FIELD.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: paymentListQuery },
    responses: {
      200: {
        description: 'A page of payments (JSON), or every matching payment (CSV)',
        content: {
          'application/json': { schema: paymentList },
          'text/csv': {
            schema: z.string().meta({
              description: 'UTF-8 with BOM; one header line, then one line per payment, newest first (CRLF)',
            }),
          },
        },
      },
      ...READ_ERRORS,
    },
  });
  const payment = createRoute({
    method: 'get',
    path: '/v1/External/Payments/{receiptNum}',
    tags: ['Reports'],
    summary: 'Everything known about one payment',
    description:
      'The payment with its donor, collector, campaign, reasons with their shares, device facts, gateway ' +
      'reference, void and the delivery state of every webhook sent about it.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { params: z.object({ receiptNum: str(32) }), query: orgQuery },
    responses: { ...jsonOk(paymentDetail, 'The payment'), ...READ_ERRORS, 404: ERROR_RESPONSES[404] },
  });
  const totals = createRoute({
    method: 'get',
    path: '/v1/External/Reports/Totals',
    tags: ['Reports'],
    summary: 'Totals over a time range, grouped',
    description:
      'Counts and sums of the payments created in [from, to), one row per group and currency (amounts in ' +
      "different currencies are never added): succeeded (charged, not voided: the gross, refunded payments included), voided, refunded (payments refunded in part or in full, and the money returned), net (succeeded − refunded), declined and failed. Days are the organisation's.",
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: totalsQuery },
    responses: { ...jsonOk(totalsResponse, 'The totals'), ...READ_ERRORS },
  });
  const donors = createRoute({
    method: 'get',
    path: '/v1/External/Donors',
    tags: ['Reports'],
    summary: 'Find donors',
    description:
      'Donors whose name (English or Hebrew, first, last or both in either order), e-mail, phone digits or ' +
      'account number contains the search text, in the order they were created, a page at a time.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: donorSearchQuery },
    responses: { ...jsonOk(donorList, 'A page of donors'), ...READ_ERRORS },
  });
  const donor = createRoute({
    method: 'get',
    path: '/v1/External/Donors/{accountNum}',
    tags: ['Reports'],
    summary: 'One donor with giving history',
    description:
      "The donor, totals per year (the organisation's civil year) and currency of the successful payments, the " +
      'latest 50 payments and the schedules.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { params: z.object({ accountNum: str(32) }), query: orgQuery },
    responses: { ...jsonOk(donorDetail, 'The donor'), ...READ_ERRORS, 404: ERROR_RESPONSES[404] },
  });

  const shifts = createRoute({
    method: 'get',
    path: '/v1/External/Reports/Shifts',
    tags: ['Reports'],
    summary: 'End-of-shift closes of the terminals',
    description:
      "Each close a cashier or collector made on a terminal, newest first: the device's totals since its previous " +
      "close and the server's totals of the same shift when it was recorded (what the device still had queued " +
      'is in the first, not yet in the second).',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: shiftListQuery },
    responses: { ...jsonOk(shiftList, 'Shift closes, newest first'), ...READ_ERRORS },
  });

  return new OpenAPIHono<AppEnv>()
    .openapi(shifts, async (c) =>
      c.json(await getShifts(c.var.deps, c.var.caller, c.req.valid('query')), 200),
    )
    .openapi(payments, async (c) => {
      const q = c.req.valid('query');
      if (wantsCsv(c.req.header('accept'))) {
        const lines = await paymentsCsv(c.var.deps, c.var.caller, q);
        return csvDownload(lines, `payments-${c.var.deps.now().toISOString().slice(0, 10)}.csv`) as never;
      }
      return c.json(await listPayments(c.var.deps, c.var.caller, q), 200);
    })
    .openapi(payment, async (c) =>
      c.json(
        await getPayment(c.var.deps, c.var.caller, c.req.valid('param').receiptNum, c.req.valid('query')),
        200,
      ),
    )
    .openapi(totals, async (c) =>
      c.json(await getTotals(c.var.deps, c.var.caller, c.req.valid('query')), 200),
    )
    .openapi(donors, async (c) =>
      c.json(await searchDonors(c.var.deps, c.var.caller, c.req.valid('query')), 200),
    )
    .openapi(donor, async (c) =>
      c.json(
        await getDonor(c.var.deps, c.var.caller, c.req.valid('param').accountNum, c.req.valid('query')),
        200,
      ),
    );
}
