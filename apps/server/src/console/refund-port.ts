/**
 * Where the console's refund endpoint meets the refund service. The refund service
 * (`refundPayment` in payments/payment-service.ts) is being built on another branch; until it is
 * merged this port answers 501, and the route, its validation and its role check are in place.
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { Deps } from '../deps.ts';
import { ApiError } from '../http/errors.ts';
import type { ConsoleUser } from './env.ts';

export interface ConsoleRefund {
  receiptNum: string;
  amountMinor: number;
  currency: string;
  status: string;
}

export async function refundFromConsole(
  _deps: Deps,
  _user: ConsoleUser,
  _receiptNum: string,
  _amountMinor: number,
  _reason: string,
): Promise<ConsoleRefund> {
  throw new ApiError(501, ERROR_CODES.INTERNAL, 'Refunds are not available yet');
}
