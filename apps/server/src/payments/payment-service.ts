/**
 * The one path for money: Charge, device sync and schedule instalments all pay through
 * `executePayment`, inside the caller's transaction, so the payment row, its reason split and its
 * webhook event commit together or not at all.
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
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { GatewayResult, Instrument } from '../gateway/gateway.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { claimKey, completeKey } from '../idempotency/repo.ts';
import type { Org } from '../orgs/repo.ts';
import {
  type DeviceFacts,
  type PaymentFacts,
  paymentWebhookBody,
  voidWebhookBody,
} from '../outbox/payloads.ts';
import { insertEvent } from '../outbox/repo.ts';
import { type PreparedInstrument, prepareInstrument } from './instrument.ts';
import { type Parties, resolveParties } from './parties.ts';
import {
  insertPayment,
  lockPaymentById,
  lockPaymentByReceipt,
  markVoided,
  type PaymentForVoid,
} from './repo.ts';

export const RESPONSE_TITLES = {
  Success: 'Payment approved',
  Declined: 'Payment declined',
  Error: 'Payment could not be processed',
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

async function callGateway(
  deps: Deps,
  input: PaymentInput,
): Promise<{ result: GatewayResult; gatewayName: string }> {
  const gateway = deps.gateways.forCaller(input.caller);
  if (!gateway) {
    return {
      gatewayName: 'None',
      result: {
        status: 'Error',
        gatewayRef: null,
        token: null,
        code: ERROR_CODES.GATEWAY_NOT_CONFIGURED,
        message: 'No production gateway is configured for this server; use a sandbox credential',
      },
    };
  }
  const started = performance.now();
  try {
    const result = input.recurringRef
      ? await gateway.recurringCharge({
          recurringRef: input.recurringRef,
          sequence: input.instalmentSeq ?? 0,
          amountMinor: input.amountMinor,
          currency: input.currency,
          idempotencyKey: input.gatewayKey,
        })
      : await gateway.authorize({
          idempotencyKey: input.gatewayKey,
          amountMinor: input.amountMinor,
          currency: input.currency,
          instrument: input.instrument,
        });
    return { result, gatewayName: gateway.name };
  } catch (err) {
    deps.logger.error({ err: String(err), gateway: gateway.name }, 'gateway call failed');
    return {
      gatewayName: gateway.name,
      result: {
        status: 'Error',
        gatewayRef: null,
        token: null,
        code: ERROR_CODES.GATEWAY_ERROR,
        message: 'The gateway could not be reached',
      },
    };
  } finally {
    deps.metrics.gatewaySeconds.observe({ gateway: gateway.name }, (performance.now() - started) / 1000);
  }
}

export async function executePayment(tx: Sql, deps: Deps, input: PaymentInput): Promise<ExecutedPayment> {
  const { result, gatewayName } = await callGateway(deps, input);
  const processedAt = deps.now().toISOString();
  const { parties, caller } = input;
  const token = result.token ?? ('token' in input.instrument ? input.instrument.token : null);
  const { id, receiptNum } = await insertPayment(tx, {
    orgId: caller.org.id,
    status: result.status,
    amountMinor: input.amountMinor,
    currency: input.currency,
    method: input.method,
    paymentDate: input.paymentDate,
    processedAt,
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
    token,
    gatewayName,
    gatewayRef: result.gatewayRef,
    errorCode: result.code,
    errorMessage: result.message,
    isAnonymous: input.isAnonymous,
    device: input.device.deviceName || input.device.location ? input.device : null,
    reasons: parties.reasons.map((r) => ({ reasonId: r.reason.id, amountMinor: r.amountMinor })),
  });
  const facts: PaymentFacts = {
    orgGuid: caller.org.guid,
    receiptNum,
    processedAt,
    amountMinor: input.amountMinor,
    currency: input.currency,
    method: input.method,
    token,
    maskedCredential: caller.masked,
    gatewayName,
    gatewayRef: result.gatewayRef,
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
  if (result.status === 'Success' && input.sendWebhook) {
    await insertEvent(tx, caller.org.id, 'payment', paymentWebhookBody(facts), deps.now());
  }
  deps.metrics.payments.inc({ status: result.status, method: input.method });
  return {
    id,
    receiptNum,
    status: result.status,
    errorCode: result.code,
    errorMessage: result.message,
    token,
    facts,
  };
}

/** Replay, reject or run a request under its idempotency key, inside one transaction. */
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
  if (claim.kind === 'conflict') {
    throw new ApiError(
      409,
      ERROR_CODES.DUPLICATE_TRANSACTION,
      `uniqueTransactionId ${key} was already used for a different ${claim.operation} request`,
    );
  }
  if (claim.kind === 'in-progress') {
    throw new ApiError(
      409,
      ERROR_CODES.TRANSACTION_IN_PROGRESS,
      `uniqueTransactionId ${key} is being processed`,
    );
  }
  const body = await run();
  await completeKey(tx, orgId, key, 200, body);
  return body;
}

export async function charge(
  deps: Deps,
  caller: Caller,
  cmd: ChargeCommand,
  requestHash: string,
): Promise<ChargeResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  assertCurrency(caller.org, cmd.currency);
  const prepared = prepareInstrument(cmd, deps.now());
  const amountMinor = toMinorUnits(cmd.amount);
  return deps.db.transaction((tx) =>
    underIdempotencyKey(tx, caller.org.id, cmd.uniqueTransactionId, 'Charge', requestHash, async () => {
      const parties = await resolveParties(tx, caller.org.id, cmd, amountMinor);
      const { instrument, ...display } = prepared;
      const paid = await executePayment(tx, deps, {
        caller,
        amountMinor,
        currency: cmd.currency,
        method: cmd.paymentMethodId,
        instrument,
        display,
        parties,
        paymentDate: cmd.paymentDate ?? deps.now().toISOString(),
        note: cmd.note,
        uniqueTransactionId: cmd.uniqueTransactionId,
        isAnonymous: cmd.isAnonymousDonation ?? parties.donor === null,
        device: deviceFacts(caller, cmd.deviceInfo),
        scheduleId: null,
        instalmentSeq: null,
        gatewayKey: `${caller.org.guid}:${cmd.uniqueTransactionId}`,
        sendWebhook: webhooksFor(caller),
      });
      return {
        receiptNum: paid.receiptNum,
        amount: cmd.amount,
        accountNum: parties.donor?.accountNum ?? null,
        currency: cmd.currency,
        paymentStatus: paid.status,
        responseTitle: RESPONSE_TITLES[paid.status],
        error:
          paid.status === 'Success' ? NO_ERROR : { errorCode: paid.errorCode, message: paid.errorMessage },
      } satisfies ChargeResponse;
    }),
  );
}

/** Void a Success payment inside the caller's transaction (gateway void, state, void webhook). */
export async function voidInTransaction(
  tx: Sql,
  deps: Deps,
  caller: Caller,
  paymentId: number,
  reason: string | null,
): Promise<void> {
  const payment = await lockPaymentById(tx, caller.org.id, paymentId);
  if (payment?.status !== 'Success') return;
  await voidLocked(tx, deps, caller, payment, reason);
}

async function voidLocked(
  tx: Sql,
  deps: Deps,
  caller: Caller,
  payment: PaymentForVoid,
  reason: string | null,
) {
  const gateway = deps.gateways.byName(payment.gatewayName);
  if (!gateway || !payment.gatewayRef) {
    throw new ApiError(
      409,
      ERROR_CODES.GATEWAY_NOT_CONFIGURED,
      `The gateway of payment ${payment.receiptNum} is not available`,
    );
  }
  const r = await gateway.void({ gatewayRef: payment.gatewayRef, idempotencyKey: `void:${payment.id}` });
  if (r.status !== 'Success') {
    throw new ApiError(409, ERROR_CODES.GATEWAY_ERROR, r.message ?? 'The gateway refused the void');
  }
  const at = deps.now().toISOString();
  await markVoided(tx, payment.id, at, reason);
  await insertEvent(
    tx,
    caller.org.id,
    'void',
    voidWebhookBody(caller.org.guid, payment.receiptNum, at),
    deps.now(),
  );
  deps.metrics.voids.inc();
}

export async function voidPayment(deps: Deps, caller: Caller, cmd: VoidCommand): Promise<VoidResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  return deps.db.transaction(async (tx) => {
    const payment = await lockPaymentByReceipt(tx, caller.org.id, cmd.receiptNum.trim());
    if (!payment) throw notFound(`Payment ${cmd.receiptNum}`);
    const done: VoidResponse = { receiptNum: payment.receiptNum, paymentStatus: 'Voided', error: NO_ERROR };
    if (payment.status === 'Voided') return done;
    if (payment.status !== 'Success') {
      throw new ApiError(
        409,
        ERROR_CODES.INVALID_STATE,
        `Payment ${payment.receiptNum} is ${payment.status}; only a Success payment can be voided`,
      );
    }
    await voidLocked(tx, deps, caller, payment, cmd.reason);
    return done;
  });
}
