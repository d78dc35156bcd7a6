/**
 * In-doubt recovery: a payment left `Pending` (the gateway timed out, the connection broke after
 * the request was sent, the process was killed mid-call) is neither Success nor lost. This worker,
 * in every server instance, leases such payments (FOR UPDATE SKIP LOCKED, so instances never do
 * the same one at once), asks the gateway what happened to that idempotency key (`lookup`), and
 * records the outcome through the same step as a request would (the payment, its webhook, and
 * what it was for: the Charge's idempotency answer, the schedule, the instalment). It never
 * re-sends a charge itself: a gateway with no record of the key charged nothing, so the claim is
 * released (as after an unreachable gateway) and the next request with the same id, a terminal's
 * retry with its sealed card, or the scheduler charges it once.
 *
 * Refunds left `pending` are resolved the same way (`recoverRefund`): the gateway is asked about the
 * refund's key, its answer recorded (status, webhook, corrected receipt, idempotency answer), or
 * the claim released when the gateway has no record of it.
 */
import type { Currency } from '@kupah/contracts';
import type { Deps } from '../deps.ts';
import type { GatewayResult } from '../gateway/gateway.ts';
import { completeSchedule } from '../schedules/schedule-service.ts';
import { finishInstalment } from '../schedules/scheduler.ts';
import { type ClaimedPayment, finishCharge, type PendingContext, releaseClaim } from './payment-service.ts';
import { type ClaimedRefund, finishRefund, type RefundContext, releaseRefund } from './refund-service.ts';
import {
  countPending,
  countPendingRefunds,
  leasePendingPayments,
  leasePendingRefunds,
  type PendingPayment,
  postponeRecovery,
  postponeRefundRecovery,
  type RefundRow,
  releaseStalePendingSchedules,
} from './repo.ts';

export interface RecoveryOptions {
  /** How often to look for payments to recover when there is nothing to do. */
  pollMs?: number;
  /** Payments leased at once by this instance. */
  batch?: number;
}

/** Back-off between lookups of one payment while the gateway cannot tell: 30 s, 1, 2, 4 … ≤ 30 min. */
export const recoveryBackoffMs = (attempts: number): number =>
  Math.min(30_000 * 2 ** Math.max(0, attempts - 1), 30 * 60_000);

export function paymentRecovery(deps: Deps, opts: RecoveryOptions = {}) {
  const pollMs = opts.pollMs ?? 5000;
  const batch = opts.batch ?? 20;
  const { db, logger, metrics } = deps;
  const lease = () => deps.calls.policy.timeoutMs + deps.calls.policy.settleMs;
  let stopped = true;
  let loop: Promise<void> | null = null;
  let wake: (() => void) | null = null;

  async function postpone(p: PendingPayment, note: string): Promise<'postponed'> {
    await postponeRecovery(
      db,
      p.id,
      new Date(deps.now().getTime() + recoveryBackoffMs(p.recoveryAttempts)),
      note,
    );
    logger.warn(
      { receiptNum: p.receiptNum, attempts: p.recoveryAttempts, note },
      'pending payment not resolved yet',
    );
    return 'postponed';
  }

  /** Resolve one leased payment: its outcome as recorded, or 'postponed'. */
  async function recoverOne(
    p: PendingPayment,
  ): Promise<GatewayResult['status'] | 'released' | 'postponed' | 'raced'> {
    const context = p.context as PendingContext | null;
    if (!context) return postpone(p, 'no pending context');
    const gateway = await deps.gateways.forCaller({
      sandbox: context.sandbox,
      org: { id: p.orgId, gatewayRev: p.orgGatewayRev },
    });
    const claimed: ClaimedPayment = {
      id: p.id,
      orgId: p.orgId,
      receiptNum: p.receiptNum,
      amountMinor: p.amountMinor,
      currency: p.currency as Currency,
      gatewayKey: p.gatewayKey,
      sentAt: p.sentAt,
      context,
    };
    let found: GatewayResult | null = null;
    if (p.gatewayName !== 'None') {
      if (!gateway || gateway.name !== p.gatewayName) {
        return postpone(p, `the organisation's gateway is no longer ${p.gatewayName}: cannot ask it`);
      }
      const outcome = await deps.calls.call(p.orgId, gateway.name, (signal) =>
        gateway.lookup(
          {
            idempotencyKey: p.gatewayKey,
            kind: 'authorize',
            amountMinor: p.amountMinor,
            currency: p.currency as Currency,
            sentAt: p.sentAt,
          },
          { signal },
        ),
      );
      if (outcome.kind !== 'answered') return postpone(p, `lookup failed: ${outcome.reason}`);
      found = outcome.result;
    }
    if (found === null) {
      // The gateway has no record of it: nothing was charged. Free it, to be charged once later.
      if (!(await db.transaction((tx) => releaseClaim(tx, deps, claimed)))) return 'raced';
      metrics.paymentsRecovered.inc({ status: 'Released' });
      logger.info({ receiptNum: p.receiptNum }, 'pending payment released: the gateway has no record of it');
      return 'released';
    }
    const result = found;
    const purpose = context.purpose;
    let recorded = true;
    if (purpose.kind === 'charge') {
      recorded = (await finishCharge(deps, claimed, result)) !== null;
    } else if (purpose.kind === 'instalment') {
      await db.transaction((tx) => finishInstalment(tx, deps, claimed, result));
    } else {
      recorded = (await completeSchedule(deps, purpose.finish, gateway, claimed, result, null)) !== null;
    }
    if (!recorded) return 'raced';
    metrics.paymentsRecovered.inc({ status: result.status });
    logger.info(
      { receiptNum: p.receiptNum, status: result.status, code: result.code, attempts: p.recoveryAttempts },
      'pending payment resolved by recovery',
    );
    return result.status;
  }

  /**
   * Resolve one leased refund the same way: the gateway's record of the refund's key (`lookup`,
   * kind `refund`) is recorded through `finishRefund`; no record means nothing was refunded, and
   * the claim is released (the same request may be sent again). A refund is never re-sent here.
   */
  async function recoverRefund(
    r: RefundRow & { orgGatewayRev: number },
  ): Promise<'succeeded' | 'failed' | 'released' | 'postponed' | 'raced'> {
    const context = r.context as RefundContext | null;
    const later = async (note: string) => {
      await postponeRefundRecovery(
        db,
        r.id,
        new Date(deps.now().getTime() + recoveryBackoffMs(r.recoveryAttempts)),
        note,
      );
      logger.warn({ refundId: r.id, attempts: r.recoveryAttempts, note }, 'pending refund not resolved yet');
      return 'postponed' as const;
    };
    if (!context) return later('no pending context');
    const gateway = await deps.gateways.forCaller({
      sandbox: context.sandbox,
      org: { id: r.orgId, gatewayRev: r.orgGatewayRev },
    });
    if (!gateway || gateway.name !== r.gatewayName) {
      return later(`the organisation's gateway is no longer ${r.gatewayName}: cannot ask it`);
    }
    const claimed: ClaimedRefund = {
      id: r.id,
      orgId: r.orgId,
      paymentId: r.paymentId,
      amountMinor: r.amountMinor,
      currency: r.currency,
      reason: r.reason,
      uniqueTransactionId: r.uniqueTransactionId,
      gatewayKey: r.gatewayKey,
      sentAt: r.sentAt,
      context,
    };
    const outcome = await deps.calls.call(r.orgId, gateway.name, (signal) =>
      gateway.lookup(
        {
          idempotencyKey: r.gatewayKey,
          kind: 'refund',
          amountMinor: r.amountMinor,
          currency: r.currency as Currency,
          sentAt: r.sentAt,
        },
        { signal },
      ),
    );
    if (outcome.kind !== 'answered') return later(`lookup failed: ${outcome.reason}`);
    if (outcome.result === null) {
      if (!(await db.transaction((tx) => releaseRefund(tx, claimed)))) return 'raced';
      logger.info({ refundId: r.id }, 'pending refund released: the gateway has no record of it');
      return 'released';
    }
    const body = await finishRefund(deps, claimed, outcome.result);
    if (!body) return 'raced';
    logger.info(
      { receiptNum: context.receiptNum, refundId: r.id, status: body.refundStatus },
      'pending refund resolved by recovery',
    );
    return body.refundStatus === 'Succeeded' ? 'succeeded' : 'failed';
  }

  /** One pass: lease what is due, resolve it; returns how many payments (and refunds) were leased. */
  async function runOnce(): Promise<number> {
    const now = deps.now();
    const until = new Date(now.getTime() + lease());
    const leased = await leasePendingPayments(db, now, until, batch);
    const refunds = await leasePendingRefunds(db, now, until, batch);
    await Promise.all([
      ...leased.map((p) =>
        recoverOne(p).catch((err) => {
          logger.error({ receiptNum: p.receiptNum, err: String(err) }, 'payment recovery failed');
        }),
      ),
      ...refunds.map((r) =>
        recoverRefund(r).catch((err) => {
          logger.error({ refundId: r.id, err: String(err) }, 'refund recovery failed');
        }),
      ),
    ]);
    await db.transaction((tx) => releaseStalePendingSchedules(tx, lease(), batch));
    const pending = await countPending(db);
    metrics.paymentsPending.set(pending.total);
    metrics.refundsPending.set(await countPendingRefunds(db));
    return Math.max(leased.length, refunds.length);
  }

  /** Resolve everything that is due now (tests call this after moving the clock). */
  async function drain(): Promise<number> {
    let n = 0;
    for (;;) {
      const k = await runOnce();
      n += k;
      if (k < batch) return n;
    }
  }

  async function run(): Promise<void> {
    while (!stopped) {
      let n = 0;
      try {
        n = await runOnce();
      } catch (err) {
        logger.error({ err: String(err) }, 'payment recovery');
      }
      if (stopped) break;
      if (n >= batch) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(done, pollMs);
        function done() {
          clearTimeout(t);
          wake = null;
          resolve();
        }
        wake = done;
      });
    }
  }

  return {
    runOnce,
    drain,
    recoverOne,
    recoverRefund,
    start() {
      if (!stopped) return;
      stopped = false;
      loop = run();
    },
    async stop() {
      stopped = true;
      wake?.();
      await loop;
    },
  };
}
export type PaymentRecovery = ReturnType<typeof paymentRecovery>;
