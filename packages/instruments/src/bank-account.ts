import type { FieldError, Result } from './methods.ts';
import { stripSeparators, text } from './methods.ts';

export const ACCOUNT_TYPES = ['Checking', 'Savings'] as const;
export type AccountType = (typeof ACCOUNT_TYPES)[number];
export const CHECK_TYPES = ['Personal', 'Business'] as const;
export type CheckType = (typeof CHECK_TYPES)[number];

export interface BankAccountInput {
  routingNum?: string | null;
  accountNum?: string | null;
  accountType?: string | null;
  checkType?: string | null;
  nameOnAccount?: string | null;
}

export interface ValidBankAccount {
  routingNum: string;
  accountNum: string;
  accountType: AccountType;
  checkType: CheckType;
  nameOnAccount: string | null;
  last4: string;
}

const MAX_NAME_LENGTH = 256;

/**
 * True for a 9-digit ABA routing transit number whose check digit is right
 * (3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 mod 10) and whose first two digits are in a range
 * the Federal Reserve assigns (00–12, 21–32, 61–72, 80). `000000000` is rejected.
 */
export function isValidAbaRouting(routing: string): boolean {
  if (typeof routing !== 'string' || !/^\d{9}$/.test(routing)) return false;
  if (routing === '000000000') return false;
  const prefix = Number(routing.slice(0, 2));
  const prefixOk =
    prefix <= 12 || (prefix >= 21 && prefix <= 32) || (prefix >= 61 && prefix <= 72) || prefix === 80;
  if (!prefixOk) return false;
  const d = Array.from(routing, Number);
  const sum = (i: number) => (d[i] ?? 0) + (d[i + 3] ?? 0) + (d[i + 6] ?? 0);
  return (3 * sum(0) + 7 * sum(1) + sum(2)) % 10 === 0;
}

function pickOption<T extends string>(raw: unknown, options: readonly T[], fallback: T): T | null {
  const value = text(raw);
  if (value === '') return fallback;
  return options.find((o) => o.toLowerCase() === value.toLowerCase()) ?? null;
}

/**
 * Validates a US bank account for ACH. Routing and account numbers may contain spaces/dashes
 * (stripped). Account type and check type are case-insensitive and default to `Checking` and
 * `Personal` when empty. Error messages never contain the account number.
 */
export function validateBankAccount(input: BankAccountInput): Result<ValidBankAccount> {
  const source: BankAccountInput = input !== null && typeof input === 'object' ? input : {};
  const errors: FieldError[] = [];

  const routingNum = stripSeparators(text(source.routingNum));
  if (routingNum === '') {
    errors.push({ field: 'bankAccount.routingNum', message: 'is required' });
  } else if (!/^\d{9}$/.test(routingNum)) {
    errors.push({ field: 'bankAccount.routingNum', message: 'must be 9 digits' });
  } else if (!isValidAbaRouting(routingNum)) {
    errors.push({ field: 'bankAccount.routingNum', message: 'is not a valid ABA routing number' });
  }

  const accountNum = stripSeparators(text(source.accountNum));
  if (accountNum === '') {
    errors.push({ field: 'bankAccount.accountNum', message: 'is required' });
  } else if (!/^\d{4,17}$/.test(accountNum)) {
    errors.push({ field: 'bankAccount.accountNum', message: 'must be 4 to 17 digits' });
  }

  const accountType = pickOption(source.accountType, ACCOUNT_TYPES, 'Checking');
  if (accountType === null) {
    errors.push({ field: 'bankAccount.accountType', message: `must be one of ${ACCOUNT_TYPES.join(', ')}` });
  }

  const checkType = pickOption(source.checkType, CHECK_TYPES, 'Personal');
  if (checkType === null) {
    errors.push({ field: 'bankAccount.checkType', message: `must be one of ${CHECK_TYPES.join(', ')}` });
  }

  const name = text(source.nameOnAccount);
  if (name.length > MAX_NAME_LENGTH) {
    errors.push({
      field: 'bankAccount.nameOnAccount',
      message: `must be at most ${MAX_NAME_LENGTH} characters`,
    });
  }

  if (errors.length > 0 || accountType === null || checkType === null) return { ok: false, errors };
  return {
    ok: true,
    value: {
      routingNum,
      accountNum,
      accountType,
      checkType,
      nameOnAccount: name === '' ? null : name,
      last4: accountNum.slice(-4),
    },
  };
}
