import type {
  PaymentMethodId,
  ScheduleCommand,
  ScheduleHandlingMode,
  ScheduleResponse,
} from '@kupah/contracts';
import { ERROR_CODES, fromMinorUnits, NO_ERROR } from '@kupah/contracts';
import { computeInstalments, type Instalment, ScheduleTermsError } from '@kupah/schedule';
import { guardCharge, recordVerification } from '../abuse/limits.ts';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import type { Gateway, GatewayResult, Instrument } from '../gateway/gateway.ts';
import { validationError } from '../http/errors.ts';
import { claimKey, completeKey, forgetKey } from '../idempotency/repo.ts';
import { civilDateIn, type OrgSettings } from '../orgs/settings.ts';
import {
  accountNumber,
  type ScheduleFacts,
  scheduleWebhookBody,
  voidWebhookBody,
} from '../outbox/payloads.ts';
import { insertEvent } from '../outbox/repo.ts';
import { prepareInstrument } from '../payments/instrument.ts';
import { resolveParties } from '../payments/parties.ts';
import {
  assertCurrency,
  assertSameOrg,
  awaitOutcome,
  type ClaimedPayment,
  claimPayment,
  deviceFacts,
  duplicate,
  leaveInDoubt,
  PENDING_ERROR,
  recordPayment,
  releaseClaim,
  sendPayment,
  UNAVAILABLE_ERROR,
  usedBefore,
  webhooksFor,
} from '../payments/payment-service.ts';
import { markVoided } from '../payments/repo.ts';
import type { ReceiptAsk } from '../receipts/receipt-service.ts';
import { type CreatedSchedule, scheduleHandlers } from './handling.ts';
import {
  deletePendingSchedule,
  insertSchedule,
  setScheduleInstrumentToken,
  setScheduleStatus,
} from './repo.ts';

/** 400 unless `startDate` is today or later in the organisation's time zone; returns today. */
export function assertStartNotPast(startDate: string, at: Date, timezone: string): string {
  const today = civilDateIn(at, timezone);
  if (startDate < today) {
    throw validationError([
      { field: 'scheduleDetails.startDate', message: `is in the past (today is ${today} in ${timezone})` },
    ]);
  }
  return today;
}

/** The instalment plan of a schedule request (400 when the terms cannot produce it). */
export function planOf(
  cmd: Pick<ScheduleCommand, 'frequency' | 'startDate' | 'amounts' | 'specialDays' | 'anniversaryRule'>,
  settings: Pick<OrgSettings, 'il' | 'shabbatShift'>,
): Instalment[] {
  try {
    return computeInstalments({
      frequency: cmd.frequency,
      startDate: cmd.startDate,
      count: cmd.amounts.count,
      firstMinor: cmd.amounts.firstMinor,
      perPaymentMinor: cmd.amounts.perPaymentMinor,
      il: settings.il,
      shabbatShift: settings.shabbatShift,
      specialDays: cmd.specialDays,
      anniversaryRule: cmd.anniversaryRule,
    });
  } catch (err) {
    if (err instanceof ScheduleTermsError) {
      throw validationError([{ field: `scheduleDetails.${err.field}`, message: err.message }]);
    }
    throw err;
  }
}
const CLOCK_SKEW_MS = 5 * 60_000;

/** When a device took the request: its own date, if within the offline window; else a 400. */
export function deviceTakenAt(deviceCreatedDate: string | null, now: Date, expiryHours: number): Date {
  if (!deviceCreatedDate) return now;
  const at = new Date(deviceCreatedDate);
  const age = now.getTime() - at.getTime();
  if (age > expiryHours * 3_600_000) {
    throw validationError([
      {
        field: 'deviceInfo.deviceCreatedDate',
        message: `is more than ${expiryHours} hours ago: an offline schedule expires after the offline window`,
      },
    ]);
  }
  if (age < -CLOCK_SKEW_MS) {
    throw validationError([{ field: 'deviceInfo.deviceCreatedDate', message: 'is in the future' }]);
  }
  return at;
}

type ScheduleBase = Pick<ScheduleResponse, 'amount' | 'accountId' | 'accountNum' | 'currency'>;

/**
 * What finishing a schedule's creation needs once the gateway answered its first payment (or
 * verification): stored with the Pending first payment, so recovery can finish it too.
 */
export interface ScheduleFinish {
  schedule: CreatedSchedule;
  scheduleNum: number;
  mode: ScheduleHandlingMode;
  method: PaymentMethodId;
  startsToday: boolean;
  startDate: string;
  totalMinor: number;
  base: ScheduleBase;
  /** The schedule webhook's facts (without the first payment), when it is to be sent. */
  webhook: Omit<ScheduleFacts, 'firstPayment'> | null;
}

const failedAnswer = (
  f: ScheduleFinish,
  receiptNum: string | null,
  responseTitle: string,
  error: { errorCode: string | null; message: string | null },
): ScheduleResponse => ({
  ...f.base,
  receiptNum,
  scheduleNum: null,
  scheduleTotal: null,
  paymentStatus: 'Failed',
  responseTitle,
  error,
});

export const pendingScheduleAnswer = (f: ScheduleFinish, receiptNum: string | null): ScheduleResponse =>
  failedAnswer(f, receiptNum, 'Schedule being confirmed: the first payment’s outcome is not known yet', {
    ...PENDING_ERROR,
  });

const unavailableAnswer = (base: ScheduleBase): ScheduleResponse => ({
  ...base,
  receiptNum: null,
  scheduleNum: null,
  scheduleTotal: null,
  paymentStatus: 'Failed',
  responseTitle: 'Schedule not created: the gateway could not be reached',
  error: { ...UNAVAILABLE_ERROR },
});

/**
 * Finish a schedule's creation from the gateway's answer to its first payment (`claimed`) or its
 * verification: the recurrence is prepared with the gateway if its mode needs it (and a first
 * payment voided if that fails), then the payment, the schedule, its plan, its webhook and the
 * idempotency answer are committed together. Recovery calls this too. Null when another caller
 * recorded the first payment first.
 */
export async function completeSchedule(
  deps: Deps,
  f: ScheduleFinish,
  gateway: Gateway | null,
  claimed: ClaimedPayment | null,
  result: GatewayResult,
  instrument: Instrument | null,
): Promise<ScheduleResponse | null> {
  const { schedule } = f;
  const receiptNum = claimed?.receiptNum ?? null;
  if (result.status !== 'Success') {
    return deps.db.transaction(async (tx) => {
      if (claimed && !(await recordPayment(tx, deps, claimed, result))) return null;
      await setScheduleStatus(tx, schedule.id, 'failed');
      const body = failedAnswer(
        f,
        receiptNum,
        f.startsToday
          ? 'Schedule not created: the first payment failed'
          : 'Schedule not created: the payment method was not accepted',
        { errorCode: result.code ?? ERROR_CODES.CARD_DECLINED, message: result.message ?? 'Declined' },
      );
      await completeKey(tx, schedule.orgId, schedule.uniqueTransactionId, 200, body);
      return body;
    });
  }
  const onFile: Instrument | null = result.token ? { method: f.method, token: result.token } : instrument;
  const handler = scheduleHandlers[f.mode];
  const prepared = await handler.prepare(deps, schedule, gateway, onFile);
  let voided = false;
  if (!prepared.ok && claimed && gateway && result.gatewayRef) {
    // The recurrence could not be set up: nothing recurs, and the first payment taken is voided.
    const ref = result.gatewayRef;
    const v = await deps.calls.call(schedule.orgId, gateway.name, (signal) =>
      gateway.void({ gatewayRef: ref, idempotencyKey: `void:${claimed.id}`, method: f.method }, { signal }),
    );
    voided = v.kind === 'answered' && v.result.status === 'Success';
    if (!voided) {
      deps.logger.error(
        { receiptNum, scheduleNum: f.scheduleNum },
        'a schedule failed after its first payment and the payment could not be voided: void it by hand',
      );
    }
  }
  return deps.db.transaction(async (tx) => {
    const paid = claimed ? await recordPayment(tx, deps, claimed, result) : null;
    if (claimed && !paid) return null;
    if (result.token) await setScheduleInstrumentToken(tx, schedule.id, result.token);
    if (!prepared.ok) {
      await setScheduleStatus(tx, schedule.id, 'failed');
      if (paid && voided) {
        const at = deps.now().toISOString();
        await markVoided(tx, paid.id, at, 'the recurrence could not be set up');
        await insertEvent(
          tx,
          schedule.orgId,
          'void',
          voidWebhookBody(schedule.orgGuid, paid.receiptNum, at),
          deps.now(),
        );
      }
      const body = failedAnswer(
        f,
        voided ? null : receiptNum,
        voided || !paid
          ? 'Schedule not created: the recurrence could not be set up'
          : `Schedule not created: the recurrence could not be set up, and first payment ${paid.receiptNum} could not be voided`,
        { errorCode: prepared.code, message: prepared.message },
      );
      await completeKey(tx, schedule.orgId, schedule.uniqueTransactionId, 200, body);
      return body;
    }
    await handler.store(tx, { ...schedule, firstPaymentId: paid?.id ?? null }, prepared);
    await setScheduleStatus(tx, schedule.id, 'active');
    if (f.webhook) {
      await insertEvent(
        tx,
        schedule.orgId,
        'schedule',
        scheduleWebhookBody({ ...f.webhook, firstPayment: paid?.facts ?? null }),
        deps.now(),
      );
    }
    const body: ScheduleResponse = {
      ...f.base,
      receiptNum,
      scheduleNum: f.scheduleNum,
      scheduleTotal: fromMinorUnits(f.totalMinor),
      paymentStatus: 'Success',
      responseTitle: f.startsToday
        ? 'Schedule created; first payment approved'
        : `Schedule created; first payment on ${f.startDate}`,
      error: NO_ERROR,
    };
    await completeKey(tx, schedule.orgId, schedule.uniqueTransactionId, 200, body);
    return body;
  });
}

export async function schedulePayment(
  deps: Deps,
  caller: Caller,
  cmd: ScheduleCommand,
  requestHash: string,
  receipt: ReceiptAsk | null = null,
): Promise<ScheduleResponse> {
  assertSameOrg(caller, cmd.orgGuid);
  assertCurrency(caller.org, cmd.currency);
  const now = deps.now();
  const { timezone, scheduleMode } = caller.org.settings;
  // "Today" is the organisation's civil date; a device's schedule is judged by when it was taken,
  // which may be at most the offline window ago (and not in the future).
  const takenAt = deviceTakenAt(
    cmd.deviceInfo?.deviceCreatedDate ?? null,
    now,
    caller.org.settings.offline.expiryHours,
  );
  const today = assertStartNotPast(cmd.startDate, takenAt, timezone);
  const { amounts } = cmd;
  if (cmd.reasons && amounts.firstMinor !== amounts.perPaymentMinor) {
    throw validationError([
      {
        field: 'reasons',
        message: 'a split across reasons needs equal payments (firstPaymentAmount = amountPerPayment)',
      },
    ]);
  }
  const prepared = prepareInstrument(cmd, now);
  const { instrument, ...display } = prepared;
  const startsToday = cmd.startDate === today;
  const plan = planOf(cmd, caller.org.settings);
  const orgId = caller.org.id;
  const key = cmd.uniqueTransactionId;
  const gateway = await deps.gateways.forCaller(caller);

  const claim = await deps.db.transaction(async (tx) => {
    const c = await claimKey(tx, orgId, key, 'SchedulePayment', requestHash, { uniqueTransaction: true });
    if (c.kind === 'replay') return { kind: 'replay' as const, body: c.body as ScheduleResponse };
    if (c.kind === 'conflict') throw duplicate(key, c.operation);
    if (c.kind === 'taken') throw usedBefore(key);
    if (c.kind === 'in-progress') return { kind: 'in-progress' as const };
    const parties = await resolveParties(tx, orgId, cmd, amounts.firstMinor);
    const device = deviceFacts(caller, cmd.deviceInfo);
    const isAnonymous = cmd.isAnonymousDonation ?? parties.donor === null;
    const schedule = await insertSchedule(tx, {
      orgId,
      status: 'pending',
      handlingMode: scheduleMode,
      frequency: cmd.frequency,
      startDate: cmd.startDate,
      count: amounts.count,
      totalMinor: amounts.totalMinor,
      firstMinor: amounts.firstMinor,
      perPaymentMinor: amounts.perPaymentMinor,
      currency: cmd.currency,
      method: cmd.paymentMethodId,
      instrument: { brand: display.brand, last4: display.last4, expiry: display.expiry, token: null },
      donorId: parties.donor?.id ?? null,
      campaignId: parties.campaign?.id ?? null,
      collectorId: parties.collector?.id ?? null,
      reasons: parties.reasons.map((r) => ({ reasonId: r.reason.id, amountMinor: r.amountMinor })),
      specialDays: cmd.specialDays,
      anniversaryRule: cmd.anniversaryRule,
      il: caller.org.settings.il,
      shabbatShift: caller.org.settings.shabbatShift,
      sourceId: caller.type === 'source' ? caller.id : null,
      apiKeyId: caller.type === 'apiKey' ? caller.id : null,
      uniqueTransactionId: key,
      note: cmd.note,
      device: device.deviceName || device.location ? device : null,
      isAnonymous,
    });
    const account = parties.donor?.accountNum ?? null;
    const finish: ScheduleFinish = {
      schedule: {
        id: schedule.id,
        orgId,
        orgGuid: caller.org.guid,
        uniqueTransactionId: key,
        currency: cmd.currency,
        plan: plan.map((i) => ({
          sequence: i.sequence,
          dueDate: i.dueDate,
          nominalDate: i.nominalDate,
          hebrewDate: i.hebrewDate,
          amountMinor: i.amountMinor,
        })),
        firstPaymentId: null,
        timeZone: timezone,
      },
      scheduleNum: schedule.scheduleNum,
      mode: scheduleMode,
      method: cmd.paymentMethodId,
      startsToday,
      startDate: cmd.startDate,
      totalMinor: amounts.totalMinor,
      base: {
        amount: fromMinorUnits(amounts.firstMinor),
        accountId: account ? accountNumber(account) : null,
        accountNum: account,
        currency: cmd.currency,
      },
      webhook: webhooksFor(caller)
        ? {
            orgGuid: caller.org.guid,
            scheduleNum: schedule.scheduleNum,
            totalMinor: amounts.totalMinor,
            count: amounts.count,
            frequency: cmd.frequency,
            startDate: cmd.startDate,
            currency: cmd.currency,
            donor: parties.donor,
            donorCreated: parties.donorCreated,
            campaign: parties.campaign,
            reason: parties.reasons[0]?.reason ?? null,
            collector: parties.collector,
            device,
          }
        : null,
    };
    if (!startsToday) {
      // A verification tells the caller whether the card is live just as a charge does: the same
      // card-testing limits apply before the gateway is asked (throws 429 when over them).
      const verifying = await guardCharge(tx, deps, caller, instrument);
      return { kind: 'claimed' as const, finish, claimed: null, verifying };
    }
    const claimed = await claimPayment(
      tx,
      deps,
      {
        caller,
        amountMinor: amounts.firstMinor,
        currency: cmd.currency,
        method: cmd.paymentMethodId,
        instrument,
        display,
        parties,
        paymentDate: cmd.paymentDate ?? now.toISOString(),
        note: cmd.note,
        uniqueTransactionId: key,
        isAnonymous,
        device,
        scheduleId: schedule.id,
        instalmentSeq: 1,
        gatewayKey: `${caller.org.guid}:${key}:1`,
        // Internal mode: a payment webhook for every instalment the service charges, the first included.
        sendWebhook: webhooksFor(caller) || scheduleMode === 'Internal',
        purpose: { kind: 'schedule', scheduleId: schedule.id, finish },
        receipt,
      },
      gateway?.name ?? 'None',
    );
    return { kind: 'claimed' as const, finish, claimed, verifying: null };
  });

  const unavailableBase: ScheduleBase = {
    amount: fromMinorUnits(amounts.firstMinor),
    accountId: null,
    accountNum: null,
    currency: cmd.currency,
  };
  if (claim.kind === 'replay') return claim.body;
  if (claim.kind === 'in-progress') {
    return awaitOutcome(
      deps,
      orgId,
      key,
      (id) => pendingScheduleOf(deps, id),
      () => unavailableAnswer(unavailableBase),
    );
  }
  const { finish, claimed, verifying } = claim;
  /** Nothing reached the gateway: forget the schedule and the key, so the same id can be tried again. */
  const release = async () => {
    await deps.db.transaction(async (tx) => {
      if (claimed) return releaseClaim(tx, deps, claimed);
      await deletePendingSchedule(tx, finish.schedule.id);
      await forgetKey(tx, orgId, key);
      return true;
    });
    return unavailableAnswer(finish.base);
  };

  let result: GatewayResult;
  if (claimed) {
    const outcome = await sendPayment(deps, gateway, claimed, instrument, null);
    if (outcome.kind === 'in_doubt') {
      await leaveInDoubt(deps, claimed, outcome.reason);
      return pendingScheduleAnswer(finish, claimed.receiptNum);
    }
    if (outcome.kind === 'unreachable') return release();
    result = outcome.result;
  } else if (gateway) {
    // Nothing is charged now; the instrument is verified and kept as a token for later charges.
    // No money moves, so a verification whose answer is lost is simply not kept: the id is freed.
    const outcome = await deps.calls.call(orgId, gateway.name, (signal) =>
      gateway.tokenize(
        { idempotencyKey: `${caller.org.guid}:${key}:verify`, instrument, currency: cmd.currency },
        { signal },
      ),
    );
    if (outcome.kind !== 'answered') return release();
    result = outcome.result;
    // Counted like a charge's outcome (a declined verification is a decline).
    if (verifying) {
      // Counting must not stop the schedule's creation now that the gateway has answered.
      await recordVerification(deps.db, deps, caller, verifying, result.status).catch((err: unknown) =>
        deps.logger.error(
          { err: String(err) },
          'a card verification was not counted for the card-testing limits',
        ),
      );
    }
  } else {
    result = {
      status: 'Error',
      gatewayRef: null,
      token: null,
      code: ERROR_CODES.GATEWAY_NOT_CONFIGURED,
      message: 'No production gateway is configured for this organisation',
    };
  }
  const body = await completeSchedule(deps, finish, gateway, claimed, result, instrument);
  return (
    body ??
    awaitOutcome(
      deps,
      orgId,
      key,
      (id) => pendingScheduleOf(deps, id),
      () => unavailableAnswer(finish.base),
    )
  );
}

/** The pending SchedulePayment answer of a first payment in doubt. */
async function pendingScheduleOf(deps: Deps, paymentId: number): Promise<ScheduleResponse> {
  const [row] = await deps.db.query<{
    receipt_num: string;
    pending_context: { purpose?: { kind: string; finish?: ScheduleFinish } } | null;
  }>('SELECT receipt_num, pending_context FROM payments WHERE id = $1', [paymentId]);
  const finish = row?.pending_context?.purpose?.finish;
  if (!row || !finish) throw new Error(`payment ${paymentId} is not a pending schedule payment`);
  return pendingScheduleAnswer(finish, row.receipt_num);
}
