/**
 * The console's refund: the same `refundPayment` money path as `POST /v1/External/RefundPayment`
 * (claim, gateway outside any transaction, record with its void webhook and corrected receipt),
 * with the signed-in user as the refund's actor. `uniqueTransactionId` comes from the console's
 * refund dialog (one per dialog): a double click or a retried request replays, never refunds twice.
 */
import type { RefundResponse } from '@kupah/contracts';
import { refundPayment } from '../payments/refund-service.ts';
import type { Ctx } from './console-service.ts';

export function refundFromConsole(
  x: Ctx,
  payment: { receiptNum: string; gatewayName: string },
  ask: { amountMinor: number | null; reason: string; uniqueTransactionId: string },
): Promise<RefundResponse> {
  return refundPayment(
    x.deps,
    {
      org: x.org,
      // The console refunds through the payment's own gateway: a sandbox payment's is the sandbox.
      sandbox: payment.gatewayName === 'Sandbox',
      actor: `console user ${x.user.email} (#${x.user.userId})`,
    },
    { receiptNum: payment.receiptNum, ...ask },
  );
}
