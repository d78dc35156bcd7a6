import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorResponse,
  type FieldError,
  issuesToFields,
} from '@kupah/contracts';
import type { z } from 'zod';

/** An error that becomes an HTTP answer with the `error: { errorCode, message }` body. */
export class ApiError extends Error {
  constructor(
    readonly status: 400 | 401 | 403 | 404 | 409 | 413 | 429 | 500 | 503,
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

export function validationError(fields: FieldError[]): ApiError {
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

export const notFound = (what: string) => new ApiError(404, ERROR_CODES.NOT_FOUND, `${what} was not found`);
