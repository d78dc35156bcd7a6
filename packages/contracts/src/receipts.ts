/**
 * Tax receipts: e-mailed to donors (English or Hebrew, with a PDF), downloadable, resendable; the
 * year-end statement of a donor. Shared by the server, the terminal and the typed client.
 */
import { z } from 'zod';
import { guid, NO_NUL, NO_NUL_MESSAGE, orgFrom, str } from './common.ts';

export const RECEIPT_LANGUAGES = ['en', 'he'] as const;
export type ReceiptLanguage = (typeof RECEIPT_LANGUAGES)[number];

/** An address a receipt can be sent to. */
export const receiptEmail = () =>
  z.email('must be an e-mail address').max(254).refine(NO_NUL, NO_NUL_MESSAGE);

/** What a delivery is: the receipt, its correction after a void, a copy asked for, a year-end statement. */
export const RECEIPT_KINDS = ['receipt', 'correction', 'copy', 'annual'] as const;
export type ReceiptKind = (typeof RECEIPT_KINDS)[number];

/**
 * pending: waiting to be sent (or retried); sent: the mail server accepted it; bounced: the mail
 * server refused it for good (a 5xx answer, e.g. no such mailbox); failed: given up after retries.
 */
export const RECEIPT_DELIVERY_STATUSES = ['pending', 'sent', 'bounced', 'failed'] as const;
export type ReceiptDeliveryStatus = (typeof RECEIPT_DELIVERY_STATUSES)[number];

export const receiptDelivery = z
  .object({
    deliveryId: z.number().int(),
    kind: z.enum(RECEIPT_KINDS),
    receiptNum: z.string().nullable().meta({ description: 'The payment (null: a year-end statement)' }),
    donorId: z.string().nullable().meta({ description: 'The donor of a year-end statement' }),
    year: z.number().int().nullable().meta({ description: 'The year of a year-end statement' }),
    email: z.string().meta({ description: 'Masked (d•••@example.com)' }),
    language: z.enum(RECEIPT_LANGUAGES),
    status: z.enum(RECEIPT_DELIVERY_STATUSES),
    attempts: z.number().int(),
    lastError: z.string().nullable(),
    createdAt: z.string(),
    sentAt: z.string().nullable(),
    nextAttemptAt: z.string().nullable(),
  })
  .meta({ id: 'ReceiptDelivery' });
export type ReceiptDelivery = z.infer<typeof receiptDelivery>;

export const receiptDeliveryList = z
  .object({ deliveries: z.array(receiptDelivery) })
  .meta({ id: 'ReceiptDeliveryList' });

export const receiptDeliveryQuery = z.strictObject({
  orgGuid: guid().optional(),
  orgGUID: guid().optional(),
  status: z.enum(RECEIPT_DELIVERY_STATUSES).optional(),
  receiptNum: str(32).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

/** `GET …/Receipt` and `GET …/Statements/{year}`: the PDF, in a language of the caller's choice. */
export const receiptPdfQuery = z.strictObject({
  orgGuid: guid().optional(),
  orgGUID: guid().optional(),
  language: z.enum(RECEIPT_LANGUAGES).optional().meta({
    description: "Absent: the donor's language, else Hebrew for an Israeli organisation, else English",
  }),
});

/** `POST /v1/External/Payments/{receiptNum}/Receipt/Send` (extension). */
export const receiptSendRequest = z
  .strictObject({
    orgGuid: guid().optional(),
    orgGUID: guid().optional(),
    email: receiptEmail()
      .optional()
      .meta({ description: "Where to send it; absent: the donor's e-mail address (400 when none)" }),
    language: z.enum(RECEIPT_LANGUAGES).optional().meta({
      description: "Absent: the donor's language, else Hebrew for an Israeli organisation, else English",
    }),
  })
  .transform((v, ctx) => ({
    orgGuid: orgFrom(ctx, v, 'orgGuid'),
    email: v.email ?? null,
    language: v.language ?? null,
  }))
  .meta({ id: 'ReceiptSendRequest' });

export const receiptSendResponse = z
  .object({
    receiptNum: z.string(),
    delivery: receiptDelivery,
  })
  .meta({ id: 'ReceiptSendResponse' });
export type ReceiptSendResponse = z.infer<typeof receiptSendResponse>;

/** `POST /v1/Device/Receipt/Send`: a receipt of a payment this device took, to an address the donor gave. */
export const deviceReceiptSendRequest = z
  .strictObject({
    receiptNum: str(32).min(1, 'is required'),
    email: receiptEmail(),
    language: z.enum(RECEIPT_LANGUAGES).optional(),
  })
  .meta({ id: 'DeviceReceiptSendRequest' });
export type DeviceReceiptSendRequest = z.input<typeof deviceReceiptSendRequest>;

/**
 * What a terminal needs to print the same receipt as the e-mail, offline too (part of the device
 * settings). Absent from servers before receipts.
 */
export const deviceReceiptSettings = z.object({
  /** The server e-mails receipts (legal name and tax id set, not turned off). */
  enabled: z.boolean(),
  legalName: z.string().nullable(),
  address: z.string().nullable(),
  taxId: z.string().nullable(),
  /** The tax statement as printed, per language, with the organisation's details filled in. */
  statement: z.object({ en: z.string(), he: z.string() }),
});
export type DeviceReceiptSettings = z.infer<typeof deviceReceiptSettings>;
