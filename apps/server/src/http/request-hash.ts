import { createHmac } from 'node:crypto';
import { ERROR_CODES } from '@kupah/contracts';
import { ApiError } from './errors.ts';

/** No message of this API nests deeper than a few levels; a deeper body is refused, not recursed. */
export const MAX_JSON_DEPTH = 32;

/**
 * Canonical JSON (keys sorted at every depth), so the same body in another key order is "the same".
 * Iterative, with a depth limit: a hostile body cannot exhaust the stack.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  const stack: { v: unknown; depth: number; close?: string }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth, close } = stack.pop()!;
    if (close !== undefined) {
      out.push(close);
      continue;
    }
    if (depth > MAX_JSON_DEPTH) {
      throw new ApiError(
        400,
        ERROR_CODES.VALIDATION_FAILED,
        `The body is nested more than ${MAX_JSON_DEPTH} levels deep`,
        [{ field: '(body)', message: `must not nest more than ${MAX_JSON_DEPTH} levels` }],
      );
    }
    if (Array.isArray(v) || (v !== null && typeof v === 'object')) {
      const isArray = Array.isArray(v);
      const keys = isArray ? v.map((_, i) => i) : Object.keys(v as object).sort();
      out.push(isArray ? '[' : '{');
      stack.push({ v: null, depth, close: isArray ? ']' : '}' });
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        const item = (v as Record<string | number, unknown>)[k];
        stack.push({ v: item, depth: depth + 1 });
        const prefix = (i > 0 ? ',' : '') + (isArray ? '' : `${JSON.stringify(k)}:`);
        stack.push({ v: null, depth, close: prefix });
      }
    } else {
      out.push(JSON.stringify(v) ?? 'null');
    }
  }
  return out.join('');
}

/**
 * Keyed hash of a request body: compares "same body" for idempotency without storing anything a
 * card number could be recovered from (an unkeyed SHA-256 of a body with a card number in it could
 * be brute-forced; this one needs the server's key).
 */
export function requestHash(body: unknown, key: string): string {
  return createHmac('sha256', key).update(canonicalJson(body)).digest('hex');
}
