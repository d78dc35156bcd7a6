/**
 * The fields of a request the terminal never keeps in clear (decisions: card data): the card
 * number and CVV, the bank account and routing numbers. They are taken out of the request before
 * it is written, and sealed under the server's key; the server puts them back when it opens the
 * box. Everything else of the request (expiry, names, amounts) is stored and shown as is.
 */
import type { SealedSecrets } from '@kupah/contracts';

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const present = (v: unknown): v is string => typeof v === 'string' && v !== '';

export interface SplitRequest {
  /** The request without any secret field (a deep copy: the caller's object is untouched). */
  clear: Record<string, unknown>;
  /** What to seal; null when the request carries no secret. */
  secrets: SealedSecrets | null;
}

export function splitSecrets(request: Record<string, unknown>): SplitRequest {
  const clear = structuredClone(request);
  const secrets: SealedSecrets = {};
  const card = clear.card;
  if (isRecord(card)) {
    const { ccNum, cvv, ...rest } = card;
    if (present(ccNum) || present(cvv)) {
      secrets.card = { ccNum: present(ccNum) ? ccNum : null, cvv: present(cvv) ? cvv : null };
    }
    clear.card = rest;
  }
  const bank = clear.bankAccount;
  if (isRecord(bank)) {
    const { accountNum, routingNum, ...rest } = bank;
    if (present(accountNum) || present(routingNum)) {
      secrets.bankAccount = {
        accountNum: present(accountNum) ? accountNum : null,
        routingNum: present(routingNum) ? routingNum : null,
      };
    }
    clear.bankAccount = rest;
  }
  return { clear, secrets: secrets.card || secrets.bankAccount ? secrets : null };
}
