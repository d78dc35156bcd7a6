import { createHmac } from 'node:crypto';
import { ANSWER_ONLY_FIELDS, ERROR_CODES } from '@kupah/contracts';
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

/** How a request hash names a card or bank account without its number (`abuse/fingerprint.ts`). */
export interface SecretFingerprints {
  card(number: string): string;
  bank(routingNum: string, accountNum: string): string;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const asText = (v: unknown): string | null =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : null;

/**
 * The body as the request hash sees it: the CVV is not an input at all, and the card number and
 * the bank account number are replaced by their keyed fingerprints (or, without fingerprints, left
 * out). So the same card still compares "the same body", another card compares different, and
 * nothing kept with the hash lets anyone brute-force a CVV or a number back.
 */
export function withoutSecrets(body: unknown, fp?: SecretFingerprints): unknown {
  if (!isRecord(body)) return body;
  const out: Record<string, unknown> = { ...body };
  if (isRecord(body.card)) {
    const { cvv: _cvv, ccNum, ...card } = body.card;
    const number = asText(ccNum);
    out.card = number !== null && fp ? { ...card, ccNum: fp.card(number) } : card;
  }
  if (isRecord(body.bankAccount)) {
    const { accountNum, ...bank } = body.bankAccount;
    const number = asText(accountNum);
    out.bankAccount =
      number !== null && fp ? { ...bank, accountNum: fp.bank(asText(bank.routingNum) ?? '', number) } : bank;
  }
  return out;
}

/**
 * Keyed hash of a request body, to compare "same body" for idempotency. It never covers a CVV or
 * a card or account number: those are replaced by keyed fingerprints first (`withoutSecrets`), so
 * the stored hash and its key (both in the database) reveal nothing of them.
 */
export function requestHash(body: unknown, key: string, fingerprints?: SecretFingerprints): string {
  return createHmac('sha256', key)
    .update(canonicalJson(withoutSecrets(body, fingerprints)))
    .digest('hex');
}

/**
 * The request hash of a validated command: the canonical request (`orgGuid`/`orgGUID`, `CA`/`CAD`,
 * `Credit Card`/`Credit_Card`, `donorId`/`accountNum` … all one form), so spelling variants of one
 * request replay its first answer instead of a 409. Fields that only say how to answer are left out.
 */
export function commandHash(command: object, key: string, fingerprints?: SecretFingerprints): string {
  const what: Record<string, unknown> = { ...command };
  for (const f of ANSWER_ONLY_FIELDS) delete what[f];
  return requestHash(what, key, fingerprints);
}
