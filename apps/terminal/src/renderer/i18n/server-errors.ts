/**
 * Messages that come from the server or the data layer, in the interface's language: each is
 * known by its error code (`serverErrors.<code>` in en.ts and he.ts). The gateway's own codes
 * (`SOLA_…`) get the gateway message with the code; a code this version does not know keeps the
 * server's own text. Where the server's text carries a detail the cashier needs (the field of a
 * validation error, the issuer's reason for a decline), it follows in parentheses.
 */
import type { TFunction } from 'i18next';
import { en } from './en.ts';

export interface CodedError {
  errorCode: string;
  message: string;
}

const KNOWN = new Set(Object.keys(en.serverErrors));
/** Codes whose server text says what exactly (a field, the issuer's reason). */
const DETAILED = new Set(['VALIDATION_FAILED', 'UNKNOWN_FIELD', 'CARD_DECLINED', 'GATEWAY_ERROR']);

export function errorText(t: TFunction, error: CodedError | null | undefined): string {
  if (!error) return '';
  const code = error.errorCode;
  const detail = error.message ? ` (${error.message})` : '';
  if (DETAILED.has(code)) return `${t(`serverErrors.${code}`)}${detail}`;
  if (KNOWN.has(code) && code !== 'gateway') return t(`serverErrors.${code}`);
  if (code.startsWith('SOLA_')) return `${t('serverErrors.gateway', { code })}${detail}`;
  return error.message;
}
