import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorResponse,
  type FieldError,
  issuesToFields,
  UNKNOWN_FIELD_MESSAGE,
} from '@kupah/contracts';
import type { z } from 'zod';

/** An error that becomes an HTTP answer with the `error: { errorCode, message }` body. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 405 | 409 | 413 | 415 | 429 | 500 | 501 | 503,
    readonly code: ErrorCode,
    message: string,
    readonly fields?: FieldError[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
  }

  body(): ErrorResponse {
    return {
      error: { errorCode: this.code, message: this.message, ...(this.fields ? { fields: this.fields } : {}) },
    };
  }
}

function invalid(fields: FieldError[]): ApiError {
  const summary = fields
    .slice(0, 5)
    .map((f) => `${f.field} ${f.message}`)
    .join('; ');
  const more = fields.length > 5 ? ` (and ${fields.length - 5} more)` : '';
  return new ApiError(400, ERROR_CODES.VALIDATION_FAILED, `Invalid request: ${summary}${more}`, fields);
}

export function fromZod(error: z.ZodError): ApiError {
  return validationError(issuesToFields(error.issues));
}

/**
 * 400 for every failing field; `UNKNOWN_FIELD` when any field is one the operation does not know
 * (listed first, with the other failures after it), `VALIDATION_FAILED` otherwise.
 */
export function validationError(fields: FieldError[]): ApiError {
  const unknown = fields.filter((f) => f.message === UNKNOWN_FIELD_MESSAGE);
  if (unknown.length === 0) return invalid(fields);
  const names = unknown.map((f) => f.field);
  const more = names.length > 5 ? ` (and ${names.length - 5} more)` : '';
  return new ApiError(
    400,
    ERROR_CODES.UNKNOWN_FIELD,
    `Unknown field${names.length > 1 ? 's' : ''}: ${names.slice(0, 5).join(', ')}${more}`,
    fields,
  );
}

export const notFound = (what: string) => new ApiError(404, ERROR_CODES.NOT_FOUND, `${what} was not found`);
