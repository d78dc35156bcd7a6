/**
 * Receipts in the External API (API key; extensions, not in the interface): a payment's receipt
 * as PDF, a copy e-mailed again, the e-mail deliveries (failures and bounces), and a donor's
 * year-end statement as PDF.
 */
import { createRoute, OpenAPIHono, z } from '@hono/zod-openapi';
import {
  receiptDeliveryList,
  receiptDeliveryQuery,
  receiptPdfQuery,
  receiptSendRequest,
  receiptSendResponse,
  str,
} from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk, validBody } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { assertSameOrg } from '../payments/payment-service.ts';
import { listReceiptDeliveries, receiptPdf, resendReceipt, statementPdf } from './receipt-service.ts';

const READ_ERRORS = {
  400: ERROR_RESPONSES[400],
  401: ERROR_RESPONSES[401],
  403: ERROR_RESPONSES[403],
  404: ERROR_RESPONSES[404],
  413: ERROR_RESPONSES[413],
  429: ERROR_RESPONSES[429],
  500: ERROR_RESPONSES[500],
} as const;

const pdfOk = (description: string) => ({
  200: {
    description,
    content: { 'application/pdf': { schema: z.string().meta({ format: 'binary' }) } },
  },
});

const pdfAnswer = (pdf: Buffer, filename: string) =>
  new Response(new Uint8Array(pdf), {
    status: 200,
    headers: {
      'Content-Type': 'application/pdf',
      'Content-Disposition': `inline; filename="${filename}"`,
      'Cache-Control': 'no-store',
    },
  }) as never;

export function receiptRoutes(buckets: TokenBuckets) {
  const apiKeyOnly = authenticate({ source: false, apiKey: true }, buckets);
  const receipt = createRoute({
    method: 'get',
    path: '/v1/External/Payments/{receiptNum}/Receipt',
    tags: ['Receipts'],
    summary: "A payment's tax receipt as PDF (extension)",
    description:
      'The receipt as it stands: of a Success payment, or the corrected receipt of a voided one (a declined, ' +
      'failed or pending payment has none: 404). It is made when asked, also when the server sends no e-mail.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { params: z.object({ receiptNum: str(32) }), query: receiptPdfQuery },
    responses: { ...pdfOk('The receipt (application/pdf)'), ...READ_ERRORS },
  });
  const send = createRoute({
    method: 'post',
    path: '/v1/External/Payments/{receiptNum}/Receipt/Send',
    tags: ['Receipts'],
    summary: "E-mail a copy of a payment's receipt (extension)",
    description:
      "Queues a copy of the receipt to the address given, else to the donor's. Sending again while a copy to the " +
      'same address still waits answers that one. 409 INVALID_STATE when receipts are off for the organisation.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: {
      params: z.object({ receiptNum: str(32) }),
      ...jsonBody(receiptSendRequest, '{ orgGuid, email?, language? }'),
    },
    responses: { ...jsonOk(receiptSendResponse, 'Queued'), ...ERROR_RESPONSES },
  });
  const deliveries = createRoute({
    method: 'get',
    path: '/v1/External/Receipts',
    tags: ['Receipts'],
    summary: 'Receipt e-mails and their delivery state (extension)',
    description:
      'Newest first: pending (with the next attempt), sent, bounced (the mail server refused the address) or ' +
      'failed (given up after retries), with the last error. Addresses are masked.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: { query: receiptDeliveryQuery },
    responses: { ...jsonOk(receiptDeliveryList, 'Deliveries'), ...READ_ERRORS },
  });
  const statement = createRoute({
    method: 'get',
    path: '/v1/External/Donors/{accountNum}/Statements/{year}',
    tags: ['Receipts'],
    summary: "A donor's year-end statement as PDF (extension)",
    description:
      "Every successful gift of the year (the organisation's civil year, by the donation's date) with the totals " +
      'per currency and the tax statement.',
    security: [{ ApiKey: [] }],
    middleware: [apiKeyOnly] as const,
    request: {
      params: z.object({ accountNum: str(32), year: z.coerce.number().int().min(2000).max(2100) }),
      query: receiptPdfQuery,
    },
    responses: { ...pdfOk('The statement (application/pdf)'), ...READ_ERRORS },
  });

  return new OpenAPIHono<AppEnv>()
    .openapi(receipt, async (c) => {
      const q = c.req.valid('query');
      const named = q.orgGuid ?? q.orgGUID;
      if (named) assertSameOrg(c.var.caller, named);
      const { receiptNum } = c.req.valid('param');
      const { pdf, filename } = await receiptPdf(c.var.deps, c.var.caller, receiptNum, q.language ?? null);
      return pdfAnswer(pdf, filename);
    })
    .openapi(send, async (c) =>
      c.json(
        await resendReceipt(
          c.var.deps,
          c.var.caller,
          c.req.valid('param').receiptNum,
          validBody(c.req, receiptSendRequest),
        ),
        200,
      ),
    )
    .openapi(deliveries, async (c) =>
      c.json(await listReceiptDeliveries(c.var.deps, c.var.caller, c.req.valid('query')), 200),
    )
    .openapi(statement, async (c) => {
      const q = c.req.valid('query');
      const named = q.orgGuid ?? q.orgGUID;
      if (named) assertSameOrg(c.var.caller, named);
      const { accountNum, year } = c.req.valid('param');
      const { pdf, filename } = await statementPdf(
        c.var.deps,
        c.var.caller,
        accountNum,
        year,
        q.language ?? null,
      );
      return pdfAnswer(pdf, filename);
    });
}
