/**
 * Refunds after settlement, full or partial: the same three steps as every other money movement
 * (payment-service.ts), never a database transaction across the network:
 *
 * 1. claim, in one short transaction: the idempotency key (`uniqueTransactionId`), the payment row
 *    locked (FOR UPDATE: concurrent refunds of one payment queue here), what remains computed
 *    after the lock (charged − refunded − refunds still pending), and a `pending` refund row that
 *    reserves its amount;
 * 2. the gateway's `refund`, outside any transaction (bounded and timed by `deps.calls`);
 * 3. record, in one transaction: the refund's outcome, the payment's `refunded_minor` and status
 *    (`PartiallyRefunded`, `Refunded`), the void webhook with the new status, the corrected receipt,
 *    and the idempotency answer.
 *
 * A call whose outcome is unknown leaves the refund `pending` (its amount still reserved); the
 * recovery worker (`recovery.ts`) asks the gateway (`lookup`, kind `refund`) and records it
 * through the same step 3, or releases it when the gateway has no record of it. A call that
 * certainly never reached the gateway releases the claim at once. Nothing is ever sent twice.
 *
 * Before settlement: refunds are not turned into voids. The server does not know when a charge
 * settles; a gateway that refuses to refund an unsettled charge answers so (the refund is recorded
 * `failed` with its code), and the caller voids the payment instead (VoidPayment). A void is
 * all-or-nothing and has its own status (`Voided`); doing one silently under a refund's name would
 * give a partial refund no meaning and the webhook another status than the caller asked for.
 */
import type { Currency, PaymentMethodId, RefundCommand, RefundResponse } from '@kupah/contracts';
import { ERROR_CODES, fromMinorUnits, NO_ERROR, toMinorUnits } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { GatewayResult } from '../gateway/gateway.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { commandHash } from '../http/request-hash.ts';
import { claimKey, completeKey, findCompletedKey, forgetKey } from '../idempotency/repo.ts';
import type { Org } from '../orgs/repo.ts';
import { refundWebhookBody } from '../outbox/payloads.ts';
import { insertEvent } from '../outbox/repo.ts';
import { queueCorrections } from '../receipts/receipt-service.ts';
import { assertSameOrg, duplicate, usedBefore, waitForOutcome } from './payment-service.ts';
import {
  applyRefund,
  deletePendingRefund,
  findRefundByKey,
  insertRefund,
  lockPaymentForRefund,
  markRefundInDoubt,
  type PaymentForRefund,
  recordRefundOutcome,
} from './repo.ts';

/** Who refunds: an organisation, through its sandbox or production gateway, and who asked. */
export interface Refunder {
  org: Pick<Org, 'id' | 'guid' | 'gatewayRev'>;
  /** A sandbox credential reaches only the sandbox gateway (and so only sandbox payments). */
  sandbox: boolean;
  /** Kept with the refund: e.g. `apiKey:<masked key>`, or a console user's id. */
  actor: string | null;
}

export interface RefundAsk {
  receiptNum: string;
  /** Minor units; null: everything that remains. */
  amountMinor: number | null;
  reason: string;
  /** Identifies this refund (the console makes one per refund dialog, as the typed client does). */
  uniqueTransactionId: string;
  /**
   * The idempotency hash of the request (the same request again replays its answer); default: a
   * hash of the receipt, amount and reason (what a console request is).
   */
  requestHash?: string;
}

/** Stored with a pending refund (`refunds.pending_context`): what recovery needs to finish it. */
export interface RefundContext {
  sandbox: boolean;
  orgGuid: string;
  receiptNum: string;
}

/** A refund claimed in step 1, as steps 2 and 3 (and recovery) need it. */
export interface ClaimedRefund {
  id: number;
  orgId: number;
  paymentId: number;
  amountMinor: number;
  currency: string;
  reason: string;
  uniqueTransactionId: string;
  gatewayKey: string;
  sentAt: Date;
  context: RefundContext;
}

export const REFUND_PENDING_ERROR = {
  errorCode: ERROR_CODES.REFUND_PENDING,
  message:
    'The gateway’s answer to the refund was not received: it is being confirmed with the gateway. Do not refund ' +
    'again; send the same request (same uniqueTransactionId) later to get the outcome.',
} as const;

const OPERATION = 'RefundPayment';
const leaseMs = (deps: Deps) => deps.calls.policy.timeoutMs + deps.calls.policy.settleMs;

const refundable = (status: string) => status === 'Success' || status === 'PartiallyRefunded';

function notRefundable(p: PaymentForRefund): ApiError {
  const why =
    p.status === 'Refunded'
      ? `Payment ${p.receiptNum} is already refunded in full`
      : p.status === 'Pending'
        ? `Payment ${p.receiptNum} is being confirmed with the gateway; it can be refunded once it is Success`
        : p.status === 'Voided'
          ? `Payment ${p.receiptNum} is voided: nothing was collected, so nothing can be refunded`
          : `Payment ${p.receiptNum} is ${p.status}; only a Success (or PartiallyRefunded) payment can be refunded`;
  return new ApiError(
    409,
    p.status === 'Refunded' ? ERROR_CODES.REFUND_EXCEEDS_REMAINING : ERROR_CODES.PAYMENT_NOT_REFUNDABLE,
    why,
  );
}

/** The answer of a refund, from the payment as it stands (`remaining` excludes every pending refund). */
function answerOf(
  p: { receiptNum: string; status: string; amountMinor: number; refundedMinor: number; currency: string },
  refund: { id: number; amountMinor: number },
  refundStatus: RefundResponse['refundStatus'],
  pendingMinor: number,
  error: RefundResponse['error'],
): RefundResponse {
  return {
    receiptNum: p.receiptNum,
    paymentStatus: p.status === 'Refunded' || p.status === 'PartiallyRefunded' ? p.status : 'Success',
    refundId: refund.id,
    refundStatus,
    refundAmount: fromMinorUnits(refund.amountMinor),
    refundedAmount: fromMinorUnits(p.refundedMinor),
    remainingAmount: fromMinorUnits(Math.max(0, p.amountMinor - p.refundedMinor - pendingMinor)),
    currency: p.currency,
    error,
  };
}

/**
 * Step 3: record a gateway result of a claimed refund, in one transaction with the payment's new
 * status, the void webhook, the corrected receipt and the idempotency answer. Null when someone
 * else recorded (or released) it first.
 */
export async function finishRefund(
  deps: Deps,
  claimed: ClaimedRefund,
  result: GatewayResult,
): Promise<RefundResponse | null> {
  return deps.db.transaction(async (tx) => {
    const payment = await lockPaymentForRefund(tx, claimed.orgId, claimed.context.receiptNum);
    if (!payment) throw new Error(`payment ${claimed.context.receiptNum} of refund ${claimed.id} is gone`);
    const at = deps.now();
    const ok = result.status === 'Success';
    const recorded = await recordRefundOutcome(tx, claimed.id, {
      status: ok ? 'succeeded' : 'failed',
      gatewayRef: result.gatewayRef,
      errorCode: ok ? null : (result.code ?? ERROR_CODES.GATEWAY_ERROR),
      errorMessage: ok ? null : (result.message ?? 'The gateway refused the refund'),
      at,
    });
    if (!recorded) return null;
    // This refund is no longer pending: what the others still reserve.
    const othersPending = payment.pendingMinor - claimed.amountMinor;
    let body: RefundResponse;
    if (ok) {
      const after = await applyRefund(tx, payment.id, claimed.amountMinor, at);
      if (!after) {
        // The payment left Success/PartiallyRefunded while the refund was at the gateway (voids are
        // refused while a refund is pending, so only a race with one that had already passed that
        // check): the refund is recorded as the gateway reported it, for an operator to reconcile.
        deps.logger.error(
          { receiptNum: payment.receiptNum, refundId: claimed.id, status: payment.status },
          'refund succeeded at the gateway on a payment that is no longer refundable',
        );
        body = answerOf(payment, claimed, 'Succeeded', othersPending, NO_ERROR);
        await completeKey(tx, claimed.orgId, claimed.uniqueTransactionId, 200, body);
        return body;
      }
      const status = after.status as 'Refunded' | 'PartiallyRefunded';
      await insertEvent(
        tx,
        claimed.orgId,
        'void',
        refundWebhookBody({
          orgGuid: claimed.context.orgGuid,
          receiptNum: payment.receiptNum,
          at: at.toISOString(),
          status,
          amountMinor: after.amountMinor,
          refundMinor: claimed.amountMinor,
          refundedMinor: after.refundedMinor,
          currency: payment.currency,
          reason: claimed.reason,
        }),
        at,
      );
      await queueCorrections(tx, payment.id, at, claimed.id);
      deps.metrics.refunds.inc({ status: 'succeeded' });
      body = answerOf(
        { ...payment, status, refundedMinor: after.refundedMinor },
        claimed,
        'Succeeded',
        othersPending,
        NO_ERROR,
      );
    } else {
      deps.metrics.refunds.inc({ status: 'failed' });
      body = answerOf(payment, claimed, 'Failed', othersPending, {
        errorCode: result.code ?? ERROR_CODES.GATEWAY_ERROR,
        message: result.message ?? 'The gateway refused the refund',
      });
    }
    await completeKey(tx, claimed.orgId, claimed.uniqueTransactionId, 200, body);
    return body;
  });
}

/**
 * Nothing reached the gateway (it was unreachable, or recovery learnt it has no record of the
 * refund): forget the claim and its key, so the same request can be sent again. False when it was
 * no longer pending.
 */
export async function releaseRefund(tx: Sql, claimed: ClaimedRefund): Promise<boolean> {
  if (!(await deletePendingRefund(tx, claimed.id))) return false;
  await forgetKey(tx, claimed.orgId, claimed.uniqueTransactionId);
  return true;
}

/** The answer to a request whose refund is pending (in doubt): its outcome is being confirmed. */
async function pendingAnswer(deps: Deps, orgId: number, key: string): Promise<RefundResponse | null> {
  const refund = await findRefundByKey(deps.db, orgId, key);
  if (refund?.status !== 'pending' || refund.gatewayState !== 'in_doubt') return null;
  const context = refund.context as RefundContext;
  const payment = await deps.db.transaction((tx) => lockPaymentForRefund(tx, orgId, context.receiptNum));
  if (!payment) return null;
  return answerOf(payment, refund, 'Pending', payment.pendingMinor, { ...REFUND_PENDING_ERROR });
}

/** Another request with the same key is at the gateway: wait (bounded) for its answer. */
async function awaitRefund(deps: Deps, orgId: number, key: string): Promise<RefundResponse> {
  return waitForOutcome(deps, key, async () => {
    const done = await findCompletedKey(deps.db, orgId, key);
    if (done) return done.body as RefundResponse;
    return (await pendingAnswer(deps, orgId, key)) ?? undefined;
  });
}

const unavailable = () =>
  new ApiError(
    503,
    ERROR_CODES.GATEWAY_UNAVAILABLE,
    'The gateway could not be reached; nothing was refunded. Try again with the same uniqueTransactionId.',
    undefined,
    { 'Retry-After': '5' },
  );

/**
 * Refund a payment of `who.org`, in full (`amountMinor` null: everything that remains) or in
 * part. The External API's RefundPayment and the console call this one function.
 */
export async function refundPayment(deps: Deps, who: Refunder, ask: RefundAsk): Promise<RefundResponse> {
  const orgId = who.org.id;
  const key = ask.uniqueTransactionId;
  const receiptNum = ask.receiptNum.trim();
  const gateway = await deps.gateways.forCaller({ sandbox: who.sandbox, org: who.org });
  const claim = await deps.db.transaction(async (tx) => {
    const hash =
      ask.requestHash ??
      commandHash(
        { receiptNum, amountMinor: ask.amountMinor, reason: ask.reason, uniqueTransactionId: key },
        deps.requestHashKey,
      );
    const c = await claimKey(tx, orgId, key, OPERATION, hash, { uniqueTransaction: true });
    if (c.kind === 'replay') return { kind: 'replay' as const, body: c.body as RefundResponse };
    if (c.kind === 'conflict') throw duplicate(key, c.operation);
    if (c.kind === 'taken') throw usedBefore(key);
    if (c.kind === 'in-progress') return { kind: 'in-progress' as const };
    // Every refusal below throws: the transaction rolls back and the id is not used up.
    const payment = await lockPaymentForRefund(tx, orgId, receiptNum);
    if (!payment) throw notFound(`Payment ${receiptNum}`);
    if (!refundable(payment.status)) throw notRefundable(payment);
    if (!gateway || gateway.name !== payment.gatewayName || !payment.gatewayRef) {
      throw new ApiError(
        409,
        ERROR_CODES.GATEWAY_NOT_CONFIGURED,
        who.sandbox && payment.gatewayName !== 'Sandbox'
          ? `Payment ${payment.receiptNum} is a live payment: a sandbox credential cannot refund it`
          : `The gateway of payment ${payment.receiptNum} (${payment.gatewayName}) is not available to this credential`,
      );
    }
    if (!gateway.refunds(payment.method as PaymentMethodId)) {
      throw new ApiError(
        409,
        ERROR_CODES.REFUND_NOT_SUPPORTED,
        `Payment ${payment.receiptNum} was paid with ${payment.method}, which ${gateway.name} cannot refund: ` +
          'return the money through the card’s provider (or void the payment before it settles)',
      );
    }
    const remaining = payment.amountMinor - payment.refundedMinor - payment.pendingMinor;
    const amountMinor = ask.amountMinor ?? remaining;
    if (amountMinor <= 0 || amountMinor > remaining) {
      const pendingNote =
        payment.pendingMinor > 0
          ? ` (${fromMinorUnits(payment.pendingMinor)} of it in refunds being confirmed)`
          : '';
      throw new ApiError(
        409,
        ERROR_CODES.REFUND_EXCEEDS_REMAINING,
        remaining <= 0
          ? `Nothing remains to refund of payment ${payment.receiptNum}${pendingNote}`
          : `The refund (${fromMinorUnits(amountMinor)}) is more than what remains of payment ${payment.receiptNum}: ` +
              `${fromMinorUnits(remaining)} ${payment.currency}`,
        ask.amountMinor === null
          ? undefined
          : [{ field: 'amount', message: `must be at most ${fromMinorUnits(remaining)}` }],
      );
    }
    const at = deps.now();
    const context: RefundContext = {
      sandbox: who.sandbox,
      orgGuid: who.org.guid,
      receiptNum: payment.receiptNum,
    };
    const gatewayKey = `${who.org.guid}:refund:${key}`;
    const id = await insertRefund(tx, {
      orgId,
      paymentId: payment.id,
      amountMinor,
      currency: payment.currency,
      reason: ask.reason,
      uniqueTransactionId: key,
      actor: who.actor,
      gatewayName: gateway.name,
      gatewayKey,
      context,
      at,
      recoveryAfter: new Date(at.getTime() + leaseMs(deps)),
    });
    const claimed: ClaimedRefund = {
      id,
      orgId,
      paymentId: payment.id,
      amountMinor,
      currency: payment.currency,
      reason: ask.reason,
      uniqueTransactionId: key,
      gatewayKey,
      sentAt: at,
      context,
    };
    return { kind: 'claimed' as const, claimed, payment };
  });
  if (claim.kind === 'replay') return claim.body;
  if (claim.kind === 'in-progress') return awaitRefund(deps, orgId, key);
  const { claimed, payment } = claim;
  const gw = gateway!;
  const ref = payment.gatewayRef!;
  const outcome = await deps.calls.call(orgId, gw.name, (signal) =>
    gw.refund(
      {
        gatewayRef: ref,
        idempotencyKey: claimed.gatewayKey,
        amountMinor: claimed.amountMinor,
        currency: claimed.currency as Currency,
        method: payment.method as PaymentMethodId,
      },
      { signal },
    ),
  );
  if (outcome.kind === 'unreachable') {
    deps.logger.warn(
      { receiptNum: payment.receiptNum, refundId: claimed.id, reason: outcome.reason },
      'refund: gateway unreachable',
    );
    await deps.db.transaction((tx) => releaseRefund(tx, claimed));
    throw unavailable();
  }
  if (outcome.kind === 'in_doubt') {
    deps.logger.warn(
      { receiptNum: payment.receiptNum, refundId: claimed.id, reason: outcome.reason },
      'gateway outcome unknown: refund left pending',
    );
    await markRefundInDoubt(
      deps.db,
      claimed.id,
      new Date(deps.now().getTime() + deps.calls.policy.settleMs),
      outcome.reason.slice(0, 500),
    );
    return answerOf(payment, claimed, 'Pending', payment.pendingMinor + claimed.amountMinor, {
      ...REFUND_PENDING_ERROR,
    });
  }
  const body = await finishRefund(deps, claimed, outcome.result);
  // Recovery recorded it first (only after this request outlived its lease): answer what it stored.
  return body ?? awaitRefund(deps, orgId, key);
}

/** `POST /v1/External/RefundPayment`: an API key of the organisation refunds one of its payments. */
export async function refundByApi(
  deps: Deps,
  caller: Caller,
  cmd: RefundCommand,
  requestHash: string,
): Promise<RefundResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  return refundPayment(
    deps,
    { org: caller.org, sandbox: caller.sandbox, actor: `${caller.type}:${caller.masked}` },
    {
      receiptNum: cmd.receiptNum,
      amountMinor: cmd.amount === null ? null : toMinorUnits(cmd.amount),
      reason: cmd.reason,
      uniqueTransactionId: cmd.uniqueTransactionId,
      requestHash,
    },
  );
}
