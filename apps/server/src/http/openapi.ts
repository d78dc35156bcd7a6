import { errorResponse } from '@kupah/contracts';
import type { z } from 'zod';

const err = (description: string) => ({
  description,
  content: { 'application/json': { schema: errorResponse } },
});

/** The error answers every External API operation can give (decisions: HTTP statuses and errors). */
export const ERROR_RESPONSES = {
  400: err('Validation failed: every failing field is listed in error.fields'),
  401: err('Missing, unknown or revoked credential'),
  403: err('The credential does not belong to the organisation in the body'),
  404: err('Unknown record'),
  409: err('uniqueTransactionId reused with a different body, or the record is in a state that forbids this'),
  413: err('Body over 64 KiB'),
  429: err('Rate limit exceeded; see Retry-After'),
  500: err('Unexpected error (no internals are disclosed)'),
} as const;

export const jsonBody = <T extends z.ZodType>(schema: T, description: string) => ({
  body: { content: { 'application/json': { schema } }, required: true, description },
});

export const jsonOk = <T extends z.ZodType>(schema: T, description: string) => ({
  200: { description, content: { 'application/json': { schema } } },
});

/**
 * The body as validated by the route's schema. TypeScript's inference through Hono's input types
 * gives up (`never`) on the two largest schemas; this keeps the exact output type of the schema.
 */
export function validBody<S extends z.ZodType>(
  req: { valid: (target: never) => unknown },
  _schema: S,
): z.output<S> {
  return req.valid('json' as never) as z.output<S>;
}
