/**
 * The one path for money. Charge, device sync, SchedulePayment and schedule instalments all pay
 * in three steps, and never hold a database transaction (or a pooled connection) across the
 * network:
 *
 * 1. claim: in one transaction, the idempotency key, the parties and a `Pending` payment row with
 *    everything needed to finish it (its webhook facts, what it is for) are committed;
 * 2. call the gateway, outside any transaction (bounded and timed by `deps.calls`);
 * 3. record: in one transaction, the outcome, the webhook event and what the payment was for
 *    (the idempotency answer, the schedule, the instalment).
 *
 * A call whose outcome is unknown leaves the payment `Pending` ("in doubt"); the recovery worker
 * (`recovery.ts`) asks the gateway and records the outcome through the same step 3. A call that
 * certainly never reached the gateway releases the claim, so the same id can be tried again.
 */
import type {
  ChargeCommand,
  ChargeResponse,
  Currency,
  PaymentMethodId,
  VoidCommand,
  VoidResponse,
} from '@kupah/contracts';
import { ERROR_CODES, NO_ERROR, toMinorUnits } from '@kupah/contracts';
import { guardCharge, recordAttempt } from '../abuse/limits.ts';
import { assertMayVoid } from '../abuse/void-scope.ts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Gateway, GatewayResult, Instrument } from '../gateway/gateway.ts';
import type { CallOutcome } from '../gateway/gateway-calls.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { claimKey, completeKey, findKeyAnswer, forgetKey } from '../idempotency/repo.ts';
import { findOrgById, type Org } from '../orgs/repo.ts';
import {
  type DeviceFacts,
  type PaymentFacts,
  paymentWebhookBody,
  voidWebhookBody,
} from '../outbox/payloads.ts';
import { insertEvent } from '../outbox/repo.ts';
import { queueCorrections, queueReceipt, type ReceiptAsk } from '../receipts/receipt-service.ts';
import { deletePendingSchedule, returnInstalment } from '../schedules/repo.ts';
import type { ScheduleFinish } from '../schedules/schedule-service.ts';
import { type PreparedInstrument, prepareInstrument } from './instrument.ts';
import { type Parties, resolveParties } from './parties.ts';
import {
  deletePendingPayment,
  findPaymentByReceipt,
  hasPendingRefund,
  insertPayment,
  lockPaymentById,
  lockPendingPayment,
  markInDoubt,
  markVoided,
  recordOutcome,
} from './repo.ts';

export const RESPONSE_TITLES = {
  Success: 'Payment approved',
  Declined: 'Payment declined',
  Error: 'Payment could not be processed',
} as const;

export const PENDING_ERROR = {
  errorCode: ERROR_CODES.PAYMENT_PENDING,
  message:
    'The gateway’s answer was not received: the payment is being confirmed with the gateway. Do not charge ' +
    'again; send the same request (same uniqueTransactionId) later to get the outcome.',
} as const;
export const PENDING_TITLE = 'Payment being confirmed';

export const UNAVAILABLE_ERROR = {
  errorCode: ERROR_CODES.GATEWAY_UNAVAILABLE,
  message:
    'The gateway could not be reached; nothing was charged. Try again with the same uniqueTransactionId.',
} as const;

/** 403 unless the credential belongs to the organisation named in the body. */
export function assertSameOrg(caller: Caller, orgGuid: string): void {
  if (caller.org.guid.toLowerCase() !== orgGuid.toLowerCase()) {
    throw new ApiError(
      403,
      ERROR_CODES.FORBIDDEN,
      'The credential does not belong to the organisation in orgGUID',
    );
  }
}

export function assertCurrency(org: Org, currency: Currency): void {
  if (!org.currencies.includes(currency)) {
    throw new ApiError(
      400,
      ERROR_CODES.CURRENCY_NOT_ENABLED,
      `${currency} is not enabled for this organisation`,
      [{ field: 'currency', message: `${currency} is not enabled; enabled: ${org.currencies.join(', ')}` }],
    );
  }
}

/** Device facts for webhooks: what the request says, else the device source's own name. */
export function deviceFacts(caller: Caller, info: ChargeCommand['deviceInfo']): DeviceFacts {
  const loc = info?.location;
  return {
    deviceName: info?.deviceName ?? (caller.sourceKind === 'device' ? caller.sourceName : null),
    timezone: info?.timezone ?? null,
    deviceCreatedDate: info?.deviceCreatedDate ?? null,
    location: loc
      ? {
          locationName: loc.locationName ?? null,
          longitude: loc.longitude == null ? null : String(loc.longitude),
          latitude: loc.latitude == null ? null : String(loc.latitude),
        }
      : null,
  };
}

/** Whether payment and schedule webhooks go out for this caller (decisions: device sources, or all). */
export const webhooksFor = (caller: Caller): boolean =>
  caller.sourceKind === 'device' || caller.org.settings.webhooksAllSources;

/** What a Pending payment is for: what recording its outcome must also finish. */
export type PendingPurpose =
  | {
      kind: 'charge';
      uniqueTransactionId: string;
      /** The Charge answer without its receipt number and outcome. */
      answer: Pick<ChargeResponse, 'amount' | 'accountNum' | 'currency'>;
    }
  | { kind: 'schedule'; scheduleId: number; finish: ScheduleFinish }
  | { kind: 'instalment'; instalmentId: number; scheduleId: number; attempts: number };

/** Stored with a Pending payment (`payments.pending_context`): never card data. */
export interface PendingContext {
  facts: Omit<PaymentFacts, 'receiptNum' | 'processedAt' | 'token' | 'gatewayRef'>;
  /** A card-on-file token the payment was charged with (kept when the gateway returns none). */
  instrumentToken: string | null;
  sendWebhook: boolean;
  sandbox: boolean;
  /** `recurringCharge`: a charge of a recurrence the gateway runs (reported, not sent by us). */
  operation: 'authorize' | 'recurringCharge';
  purpose: PendingPurpose;
  /** Where the receipt goes when it succeeds, when the request said (a device's donor typed it). */
  receipt?: ReceiptAsk | null;
}

export interface PaymentInput {
  caller: Caller;
  amountMinor: number;
  currency: Currency;
  method: PaymentMethodId;
  instrument: Instrument;
  display: Omit<PreparedInstrument, 'instrument'>;
  parties: Parties;
  paymentDate: string;
  note: string | null;
  uniqueTransactionId: string | null;
  isAnonymous: boolean;
  device: DeviceFacts;
  scheduleId: number | null;
  instalmentSeq: number | null;
  /** Passed to the gateway so a retried charge is not charged twice there either. */
  gatewayKey: string;
  /** Set for a charge of a recurrence the gateway runs (ScheduleHandlingMode `Gateway`). */
  recurringRef?: string | null;
  sendWebhook: boolean;
  purpose: PendingPurpose;
  /** Where to e-mail the receipt (absent: the donor's address, if any). */
  receipt?: ReceiptAsk | null;
}

/** A payment claimed in step 1, as steps 2 and 3 (and recovery) need it. */
export interface ClaimedPayment {
  id: number;
  orgId: number;
  receiptNum: string;
  amountMinor: number;
  currency: Currency;
  gatewayKey: string;
  sentAt: Date;
  context: PendingContext;
}

export interface ExecutedPayment {
  id: number;
  receiptNum: string;
  status: 'Success' | 'Declined' | 'Error';
  errorCode: string | null;
  errorMessage: string | null;
  token: string | null;
  facts: PaymentFacts;
}

const recoveryLeaseMs = (deps: Deps) => deps.calls.policy.timeoutMs + deps.calls.policy.settleMs;

/** Step 1: insert the Pending payment (inside the caller's claim transaction). */
export async function claimPayment(
  tx: Sql,
  deps: Deps,
  input: PaymentInput,
  gatewayName: string,
): Promise<ClaimedPayment> {
  const { parties, caller } = input;
  const now = deps.now();
  const instrumentToken = 'token' in input.instrument ? input.instrument.token : null;
  const base = {
    orgGuid: caller.org.guid,
    amountMinor: input.amountMinor,
    currency: input.currency,
    method: input.method,
    maskedCredential: caller.masked,
    gatewayName,
    brand: input.display.brand,
    last4: input.display.last4,
    cardHolderName: input.display.cardHolderName,
    isAnonymous: input.isAnonymous,
    device: input.device,
    donor: parties.donor,
    donorCreated: parties.donorCreated,
    campaign: parties.campaign,
    reasons: parties.reasons.map((r) => r.reason),
    collector: parties.collector,
  };
  const partial = {
    instrumentToken,
    sendWebhook: input.sendWebhook,
    sandbox: caller.sandbox,
    operation: input.recurringRef ? ('recurringCharge' as const) : ('authorize' as const),
  };
  const context: PendingContext = {
    ...partial,
    facts: base,
    purpose: input.purpose,
    ...(input.receipt ? { receipt: input.receipt } : {}),
  };
  // Card-testing limits, before anything reaches the gateway (an instalment charges a token).
  const fingerprint =
    input.purpose.kind === 'instalment' ? null : await guardCharge(tx, deps, caller, input.instrument);
  const { id, receiptNum } = await insertPayment(tx, {
    orgId: caller.org.id,
    amountMinor: input.amountMinor,
    currency: input.currency,
    method: input.method,
    paymentDate: input.paymentDate,
    processedAt: now.toISOString(),
    donorId: parties.donor?.id ?? null,
    donorCreated: parties.donorCreated,
    campaignId: parties.campaign?.id ?? null,
    collectorId: parties.collector?.id ?? null,
    scheduleId: input.scheduleId,
    instalmentSeq: input.instalmentSeq,
    sourceId: caller.type === 'source' ? caller.id : null,
    apiKeyId: caller.type === 'apiKey' ? caller.id : null,
    uniqueTransactionId: input.uniqueTransactionId,
    note: input.note,
    brand: input.display.brand,
    last4: input.display.last4,
    expiry: input.display.expiry,
    cardHolderName: input.display.cardHolderName,
    token: instrumentToken,
    gatewayName,
    gatewayKey: input.gatewayKey,
    isAnonymous: input.isAnonymous,
    device: input.device.deviceName || input.device.location ? input.device : null,
    reasons: parties.reasons.map((r) => ({ reasonId: r.reason.id, amountMinor: r.amountMinor })),
    context,
    recoveryAfter: new Date(now.getTime() + recoveryLeaseMs(deps)),
    idempotencyKey: input.purpose.kind === 'instalment' ? null : input.uniqueTransactionId,
  });
  if (fingerprint) await recordAttempt(tx, caller.org.id, id, fingerprint, now);
  return {
    id,
    orgId: caller.org.id,
    receiptNum,
    amountMinor: input.amountMinor,
    currency: input.currency,
    gatewayKey: input.gatewayKey,
    sentAt: now,
    context,
  };
}

const notConfigured = (): CallOutcome => ({
  kind: 'answered',
  result: {
    status: 'Error',
    gatewayRef: null,
    token: null,
    code: ERROR_CODES.GATEWAY_NOT_CONFIGURED,
    message: 'No production gateway is configured for this organisation; use a sandbox credential',
  },
});

/** Step 2: call the gateway for a claimed payment, outside any transaction. */
export async function sendPayment(
  deps: Deps,
  gateway: Gateway | null,
  claimed: ClaimedPayment,
  instrument: Instrument,
  recurring: { ref: string; sequence: number } | null,
): Promise<CallOutcome> {
  if (!gateway) return notConfigured();
  const started = performance.now();
  const outcome = await deps.calls.call(claimed.orgId, gateway.name, (signal) => {
    if (recurring) {
      if (!gateway.recurringCharge) throw new Error(`${gateway.name} does not run recurrences`);
      return gateway.recurringCharge(
        {
          recurringRef: recurring.ref,
          sequence: recurring.sequence,
          amountMinor: claimed.amountMinor,
          currency: claimed.currency,
          idempotencyKey: claimed.gatewayKey,
        },
        { signal },
      );
    }
    return gateway.authorize(
      {
        idempotencyKey: claimed.gatewayKey,
        amountMinor: claimed.amountMinor,
        currency: claimed.currency,
        instrument,
      },
      { signal },
    );
  });
  deps.metrics.gatewaySeconds.observe({ gateway: gateway.name }, (performance.now() - started) / 1000);
  if (outcome.kind !== 'answered') {
    deps.logger.warn(
      {
        receiptNum: claimed.receiptNum,
        gateway: gateway.name,
        outcome: outcome.kind,
        reason: outcome.reason,
      },
      outcome.kind === 'in_doubt' ? 'gateway outcome unknown: payment left pending' : 'gateway unreachable',
    );
  }
  return outcome;
}

/** A receipt e-mail goes with this payment's success: an address was given, or the donor has one. */
function wantsReceipt(claimed: ClaimedPayment): boolean {
  return Boolean(
    claimed.context.receipt?.email || claimed.context.facts.donor?.emails.some((e) => e.emailAddress),
  );
}

/** Step 3: record a gateway result of a claimed payment (in the caller's transaction). */
export async function recordPayment(
  tx: Sql,
  deps: Deps,
  claimed: ClaimedPayment,
  result: GatewayResult,
  answer: { key: string; body: unknown } | null = null,
): Promise<ExecutedPayment | null> {
  const processedAt = deps.now().toISOString();
  const token = result.token ?? claimed.context.instrumentToken;
  const recorded = await recordOutcome(
    tx,
    claimed.id,
    {
      status: result.status,
      gatewayRef: result.gatewayRef,
      token,
      errorCode: result.code,
      errorMessage: result.message,
      processedAt,
    },
    answer && { orgId: claimed.orgId, ...answer },
  );
  if (!recorded) return null;
  const facts: PaymentFacts = {
    ...claimed.context.facts,
    receiptNum: claimed.receiptNum,
    processedAt,
    token,
    gatewayRef: result.gatewayRef,
  };
  if (result.status === 'Success' && claimed.context.sendWebhook) {
    await insertEvent(tx, claimed.orgId, 'payment', paymentWebhookBody(facts), deps.now());
  }
  if (result.status === 'Success' && wantsReceipt(claimed)) {
    // The receipt e-mail, in the same transaction as the payment: sent once it is committed.
    const org = await findOrgById(tx, claimed.orgId);
    if (org) await queueReceipt(tx, org, claimed.id, facts.donor, claimed.context.receipt, deps.now());
  }
  deps.metrics.payments.inc({ status: result.status, method: facts.method });
  return {
    id: claimed.id,
    receiptNum: claimed.receiptNum,
    status: result.status,
    errorCode: result.code,
    errorMessage: result.message,
    token,
    facts,
  };
}

/** When an instalment whose charge never reached the gateway is tried again (not an attempt). */
export const RELEASED_INSTALMENT_RETRY_MS = 5 * 60_000;

/**
 * Nothing reached the gateway (it was unreachable, or recovery learnt it has no record of the
 * call): forget the claim, so the same request can be sent again and charged once. A Charge's or
 * a schedule's idempotency key is released (and the pending schedule forgotten); an instalment is
 * due again shortly. False when the payment was no longer Pending (someone recorded it).
 */
export async function releaseClaim(tx: Sql, deps: Deps, claimed: ClaimedPayment): Promise<boolean> {
  if (!(await lockPendingPayment(tx, claimed.id))) return false;
  const p = claimed.context.purpose;
  if (p.kind === 'charge') {
    await forgetKey(tx, claimed.orgId, p.uniqueTransactionId);
  } else if (p.kind === 'schedule') {
    await forgetKey(tx, claimed.orgId, p.finish.schedule.uniqueTransactionId);
  } else {
    await returnInstalment(tx, p.instalmentId, new Date(deps.now().getTime() + RELEASED_INSTALMENT_RETRY_MS));
  }
  await deletePendingPayment(tx, claimed.id);
  if (p.kind === 'schedule') await deletePendingSchedule(tx, p.scheduleId);
  return true;
}

/** The call ended in doubt: leave it Pending for recovery (after the gateway has had time to settle). */
export async function leaveInDoubt(deps: Deps, claimed: ClaimedPayment, reason: string): Promise<void> {
  const after = new Date(deps.now().getTime() + deps.calls.policy.settleMs);
  await markInDoubt(deps.db, claimed.id, after, reason.slice(0, 500));
}

// ---------------------------------------------------------------------------------------------
// Charge

type ChargeAnswer = Pick<ChargeResponse, 'receiptNum' | 'amount' | 'accountNum' | 'currency'>;
const answerOf = (
  claimed: { receiptNum: string },
  purpose: Extract<PendingPurpose, { kind: 'charge' }>,
): ChargeAnswer => ({
  receiptNum: claimed.receiptNum,
  ...purpose.answer,
});

export function chargeAnswer(
  answer: ChargeAnswer,
  paid: Pick<ExecutedPayment, 'status' | 'errorCode' | 'errorMessage'>,
): ChargeResponse {
  return {
    ...answer,
    paymentStatus: paid.status,
    responseTitle: RESPONSE_TITLES[paid.status],
    error: paid.status === 'Success' ? NO_ERROR : { errorCode: paid.errorCode, message: paid.errorMessage },
  };
}

export const pendingChargeAnswer = (answer: ChargeAnswer): ChargeResponse => ({
  ...answer,
  paymentStatus: 'Error',
  responseTitle: PENDING_TITLE,
  error: { ...PENDING_ERROR },
});

/**
 * Finish a Charge's payment: record it with its idempotency answer, in one statement, or in one
 * transaction with its webhook event when it has one (recovery calls it too). Null when another
 * caller recorded it first.
 */
export async function finishCharge(
  deps: Deps,
  claimed: ClaimedPayment,
  result: GatewayResult,
): Promise<ChargeResponse | null> {
  const purpose = claimed.context.purpose;
  if (purpose.kind !== 'charge') throw new Error('not a charge');
  const body = chargeAnswer(answerOf(claimed, purpose), {
    status: result.status,
    errorCode: result.code,
    errorMessage: result.message,
  });
  const answer = { key: purpose.uniqueTransactionId, body };
  // A success that writes a webhook event or a receipt e-mail writes it with the payment: one transaction.
  const withEvent = result.status === 'Success' && (claimed.context.sendWebhook || wantsReceipt(claimed));
  const paid = withEvent
    ? await deps.db.transaction((tx) => recordPayment(tx, deps, claimed, result, answer))
    : await recordPayment(deps.db, deps, claimed, result, answer);
  return paid ? body : null;
}

/**
 * Wait (bounded) for the outcome of a request another caller is processing under the same key:
 * its stored answer, or `pendingAnswer` once it is in doubt, or 409 REQUEST_IN_PROGRESS.
 */
export async function awaitOutcome<T>(
  deps: Deps,
  orgId: number,
  key: string,
  pendingAnswer: (paymentId: number) => Promise<T>,
  released: () => T,
): Promise<T> {
  return waitForOutcome(deps, key, async () => {
    const state = await findKeyAnswer(deps.db, orgId, key);
    if (state.kind === 'answered') return state.body as T;
    if (state.kind === 'gone') return released();
    if (state.kind === 'pending' && state.inDoubt) return pendingAnswer(state.paymentId);
    return undefined;
  });
}

/**
 * Asks `probe` with a back-off (20 ms doubling to 250 ms) until it has an answer, for at most the
 * gateway policy's waitForOutcomeMs; then 409 REQUEST_IN_PROGRESS with Retry-After. Charges and
 * refunds wait for another request's outcome under the same key with it.
 */
export async function waitForOutcome<T>(
  deps: Deps,
  key: string,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + deps.calls.policy.waitForOutcomeMs;
  let delay = 20;
  for (;;) {
    const answer = await probe();
    if (answer !== undefined) return answer;
    if (Date.now() >= deadline) {
      throw new ApiError(
        409,
        ERROR_CODES.REQUEST_IN_PROGRESS,
        `uniqueTransactionId ${key} is being processed by another request; retry shortly for its outcome`,
        undefined,
        { 'Retry-After': '2' },
      );
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 250);
  }
}

export async function charge(
  deps: Deps,
  caller: Caller,
  cmd: ChargeCommand,
  requestHash: string,
  receipt: ReceiptAsk | null = null,
): Promise<ChargeResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  assertCurrency(caller.org, cmd.currency);
  const prepared = prepareInstrument(cmd, deps.now());
  const { instrument, ...display } = prepared;
  const amountMinor = toMinorUnits(cmd.amount);
  const orgId = caller.org.id;
  const key = cmd.uniqueTransactionId;
  const gateway = await deps.gateways.forCaller(caller);
  const claim = await deps.db.transaction(async (tx) => {
    const c = await claimKey(tx, orgId, key, 'Charge', requestHash, { uniqueTransaction: true });
    if (c.kind === 'replay') return { kind: 'replay' as const, body: c.body as ChargeResponse };
    if (c.kind === 'conflict') throw duplicate(key, c.operation);
    if (c.kind === 'taken') throw usedBefore(key);
    if (c.kind === 'in-progress') return { kind: 'in-progress' as const };
    const parties = await resolveParties(tx, orgId, cmd, amountMinor);
    const claimed = await claimPayment(
      tx,
      deps,
      {
        caller,
        amountMinor,
        currency: cmd.currency,
        method: cmd.paymentMethodId,
        instrument,
        display,
        parties,
        paymentDate: cmd.paymentDate ?? deps.now().toISOString(),
        note: cmd.note,
        uniqueTransactionId: key,
        isAnonymous: cmd.isAnonymousDonation ?? parties.donor === null,
        device: deviceFacts(caller, cmd.deviceInfo),
        scheduleId: null,
        instalmentSeq: null,
        gatewayKey: `${caller.org.guid}:${key}`,
        sendWebhook: webhooksFor(caller),
        receipt,
        purpose: {
          kind: 'charge',
          uniqueTransactionId: key,
          answer: {
            amount: cmd.amount,
            accountNum: parties.donor?.accountNum ?? null,
            currency: cmd.answerCurrency,
          },
        },
      },
      gateway?.name ?? 'None',
    );
    return { kind: 'claimed' as const, claimed };
  });
  const unavailable = (): ChargeResponse => ({
    receiptNum: null,
    amount: cmd.amount,
    accountNum: null,
    currency: cmd.answerCurrency,
    paymentStatus: 'Error',
    responseTitle: RESPONSE_TITLES.Error,
    error: { ...UNAVAILABLE_ERROR },
  });
  if (claim.kind === 'replay') return claim.body;
  if (claim.kind === 'in-progress') {
    return awaitOutcome(deps, orgId, key, (id) => pendingChargeOf(deps, id), unavailable);
  }
  const { claimed } = claim;
  const purpose = claimed.context.purpose as Extract<PendingPurpose, { kind: 'charge' }>;
  const outcome = await sendPayment(deps, gateway, claimed, instrument, null);
  if (outcome.kind === 'in_doubt') {
    await leaveInDoubt(deps, claimed, outcome.reason);
    return pendingChargeAnswer(answerOf(claimed, purpose));
  }
  if (outcome.kind === 'unreachable') {
    await deps.db.transaction((tx) => releaseClaim(tx, deps, claimed));
    return unavailable();
  }
  const body = await finishCharge(deps, claimed, outcome.result);
  // Recovery recorded it first (only after this request outlived its lease): answer what it stored.
  return body ?? awaitOutcome(deps, orgId, key, (id) => pendingChargeOf(deps, id), unavailable);
}

/** The pending Charge answer of a payment (another request's, in doubt). */
async function pendingChargeOf(deps: Deps, paymentId: number): Promise<ChargeResponse> {
  const [row] = await deps.db.query<{ receipt_num: string; pending_context: PendingContext | null }>(
    'SELECT receipt_num, pending_context FROM payments WHERE id = $1',
    [paymentId],
  );
  const purpose = row?.pending_context?.purpose;
  if (!row || purpose?.kind !== 'charge') throw new Error(`payment ${paymentId} is not a pending charge`);
  return pendingChargeAnswer(answerOf({ receiptNum: row.receipt_num }, purpose));
}

/** 409: a payment or schedule used this id before (its idempotency record is gone): unique forever. */
export const usedBefore = (key: string) =>
  new ApiError(
    409,
    ERROR_CODES.DUPLICATE_TRANSACTION,
    `uniqueTransactionId ${key} was already used: the same value cannot be used for more than one transaction`,
  );

/** 409: the id was used before for another request (another body, or another operation). */
export const duplicate = (key: string, operation: string) =>
  new ApiError(
    409,
    ERROR_CODES.DUPLICATE_TRANSACTION,
    `uniqueTransactionId ${key} was already used for a different ${operation} request`,
  );

/** Replay, reject or run a request under its idempotency key, inside one transaction (no gateway call). */
export async function underIdempotencyKey<T>(
  tx: Sql,
  orgId: number,
  key: string,
  operation: string,
  requestHash: string,
  run: () => Promise<T>,
): Promise<T> {
  const claim = await claimKey(tx, orgId, key, operation, requestHash);
  if (claim.kind === 'replay') return claim.body as T;
  if (claim.kind === 'conflict') throw duplicate(key, claim.operation);
  if (claim.kind === 'taken') throw usedBefore(key);
  if (claim.kind === 'in-progress') {
    throw new ApiError(
      409,
      ERROR_CODES.REQUEST_IN_PROGRESS,
      `uniqueTransactionId ${key} is being processed`,
      undefined,
      {
        'Retry-After': '2',
      },
    );
  }
  const body = await run();
  await completeKey(tx, orgId, key, 200, body);
  return body;
}

// ---------------------------------------------------------------------------------------------
// Void

/**
 * Void a Success payment: the gateway is asked first (outside any transaction; its void is
 * idempotent per payment), then the state and the void webhook are committed together.
 */
async function voidWithGateway(
  deps: Deps,
  caller: Caller,
  payment: { id: number; receiptNum: string; gatewayName: string; gatewayRef: string | null; method: string },
  reason: string | null,
): Promise<void> {
  const gateway = await deps.gateways.forCaller(caller);
  if (!gateway || gateway.name !== payment.gatewayName || !payment.gatewayRef) {
    throw new ApiError(
      409,
      ERROR_CODES.GATEWAY_NOT_CONFIGURED,
      caller.sandbox && payment.gatewayName !== 'Sandbox'
        ? `Payment ${payment.receiptNum} is a live payment: a sandbox credential cannot void it`
        : `The gateway of payment ${payment.receiptNum} (${payment.gatewayName}) is not available to this credential`,
    );
  }
  const ref = payment.gatewayRef;
  const outcome = await deps.calls.call(caller.org.id, gateway.name, (signal) =>
    gateway.void(
      { gatewayRef: ref, idempotencyKey: `void:${payment.id}`, method: payment.method as PaymentMethodId },
      { signal },
    ),
  );
  if (outcome.kind !== 'answered') {
    throw new ApiError(
      503,
      ERROR_CODES.GATEWAY_UNAVAILABLE,
      'The gateway did not confirm the void; nothing was changed here. Try again.',
      undefined,
      { 'Retry-After': '5' },
    );
  }
  if (outcome.result.status !== 'Success') {
    throw new ApiError(
      409,
      ERROR_CODES.GATEWAY_ERROR,
      outcome.result.message ?? 'The gateway refused the void',
    );
  }
  await deps.db.transaction(async (tx) => {
    const locked = await lockPaymentById(tx, caller.org.id, payment.id);
    if (locked?.status !== 'Success') return;
    const at = deps.now().toISOString();
    await markVoided(tx, payment.id, at, reason);
    await queueCorrections(tx, payment.id, deps.now());
    await insertEvent(
      tx,
      caller.org.id,
      'void',
      voidWebhookBody(caller.org.guid, payment.receiptNum, at),
      deps.now(),
    );
    deps.metrics.voids.inc();
  });
}

/** Void a payment by id if it is Success (a schedule whose recurrence could not be set up). */
export async function voidById(
  deps: Deps,
  caller: Caller,
  paymentId: number,
  reason: string | null,
): Promise<void> {
  const [row] = await deps.db.query<{ receipt_num: string }>(
    'SELECT receipt_num FROM payments WHERE id = $1 AND org_id = $2',
    [paymentId, caller.org.id],
  );
  if (!row) return;
  const payment = await findPaymentByReceipt(deps.db, caller.org.id, row.receipt_num);
  if (payment?.status !== 'Success') return;
  await voidWithGateway(deps, caller, payment, reason);
}

export async function voidPayment(deps: Deps, caller: Caller, cmd: VoidCommand): Promise<VoidResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  const payment = await findPaymentByReceipt(deps.db, caller.org.id, cmd.receiptNum.trim());
  if (!payment) throw notFound(`Payment ${cmd.receiptNum}`);
  await assertMayVoid(deps.db, caller, payment);
  const done: VoidResponse = { receiptNum: payment.receiptNum, paymentStatus: 'Voided', error: NO_ERROR };
  if (payment.status === 'Voided') return done;
  if (payment.status === 'Success' && (await hasPendingRefund(deps.db, payment.id))) {
    throw new ApiError(
      409,
      ERROR_CODES.INVALID_STATE,
      `Payment ${payment.receiptNum} has a refund being confirmed with the gateway; it cannot be voided now`,
    );
  }
  if (payment.status !== 'Success') {
    throw new ApiError(
      409,
      ERROR_CODES.INVALID_STATE,
      payment.status === 'Pending'
        ? `Payment ${payment.receiptNum} is being confirmed with the gateway; it can be voided once it is Success`
        : `Payment ${payment.receiptNum} is ${payment.status}; only a Success payment can be voided`,
    );
  }
  try {
    await voidWithGateway(deps, caller, payment, cmd.reason);
  } catch (err) {
    // Another request voided it meanwhile (the gateway then refuses a second void): the same answer.
    const now = await findPaymentByReceipt(deps.db, caller.org.id, payment.receiptNum);
    if (now?.status !== 'Voided') throw err;
  }
  return done;
}
