import type { ScheduleCommand, ScheduleResponse } from '@kupah/contracts';
import { ERROR_CODES, fromMinorUnits, NO_ERROR } from '@kupah/contracts';
import { computeInstalments, type Instalment, ScheduleTermsError } from '@kupah/schedule';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import type { GatewayResult, Instrument } from '../gateway/gateway.ts';
import { validationError } from '../http/errors.ts';
import { civilDateIn, type OrgSettings } from '../orgs/settings.ts';
import { accountNumber, type ScheduleFacts, scheduleWebhookBody } from '../outbox/payloads.ts';
import { insertEvent } from '../outbox/repo.ts';
import { prepareInstrument } from '../payments/instrument.ts';
import { resolveParties } from '../payments/parties.ts';
import {
  assertCurrency,
  assertSameOrg,
  deviceFacts,
  type ExecutedPayment,
  executePayment,
  underIdempotencyKey,
  voidInTransaction,
  webhooksFor,
} from '../payments/payment-service.ts';
import { scheduleHandlers } from './handling.ts';
import { insertSchedule, setScheduleInstrumentToken, setScheduleStatus } from './repo.ts';

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

export async function schedulePayment(
  deps: Deps,
  caller: Caller,
  cmd: ScheduleCommand,
  requestHash: string,
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

  return deps.db.transaction((tx) =>
    underIdempotencyKey(
      tx,
      caller.org.id,
      cmd.uniqueTransactionId,
      'SchedulePayment',
      requestHash,
      async () => {
        const parties = await resolveParties(tx, caller.org.id, cmd, amounts.firstMinor);
        const device = deviceFacts(caller, cmd.deviceInfo);
        const isAnonymous = cmd.isAnonymousDonation ?? parties.donor === null;
        const schedule = await insertSchedule(tx, {
          orgId: caller.org.id,
          status: 'active',
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
          uniqueTransactionId: cmd.uniqueTransactionId,
          note: cmd.note,
          device: device.deviceName || device.location ? device : null,
          isAnonymous,
        });

        let first: ExecutedPayment | null = null;
        let outcome: Pick<GatewayResult, 'status' | 'token' | 'code' | 'message'>;
        if (startsToday) {
          first = await executePayment(tx, deps, {
            caller,
            amountMinor: amounts.firstMinor,
            currency: cmd.currency,
            method: cmd.paymentMethodId,
            instrument,
            display,
            parties,
            paymentDate: cmd.paymentDate ?? now.toISOString(),
            note: cmd.note,
            uniqueTransactionId: cmd.uniqueTransactionId,
            isAnonymous,
            device,
            scheduleId: schedule.id,
            instalmentSeq: 1,
            gatewayKey: `${caller.org.guid}:${cmd.uniqueTransactionId}:1`,
            // Internal mode: a payment webhook for every instalment the service charges, the first included.
            sendWebhook: webhooksFor(caller) || scheduleMode === 'Internal',
          });
          outcome = {
            status: first.status,
            token: first.token,
            code: first.errorCode,
            message: first.errorMessage,
          };
        } else {
          // Nothing is charged now; the instrument is verified and kept as a token for later charges.
          const gateway = deps.gateways.forCaller(caller);
          outcome = gateway
            ? await gateway.tokenize({
                idempotencyKey: `${caller.org.guid}:${cmd.uniqueTransactionId}:verify`,
                instrument,
                currency: cmd.currency,
              })
            : {
                status: 'Error',
                token: null,
                code: ERROR_CODES.GATEWAY_NOT_CONFIGURED,
                message: 'No production gateway is configured for this server',
              };
        }

        const account = parties.donor?.accountNum ?? null;
        const base = {
          receiptNum: first?.receiptNum ?? null,
          amount: fromMinorUnits(amounts.firstMinor),
          accountId: account ? accountNumber(account) : null,
          accountNum: account,
          currency: cmd.currency,
        };
        if (outcome.status !== 'Success') {
          await setScheduleStatus(tx, schedule.id, 'failed');
          return {
            ...base,
            scheduleNum: null,
            scheduleTotal: null,
            paymentStatus: 'Failed',
            responseTitle: startsToday
              ? 'Schedule not created: the first payment failed'
              : 'Schedule not created: the payment method was not accepted',
            error: {
              errorCode: outcome.code ?? ERROR_CODES.CARD_DECLINED,
              message: outcome.message ?? 'Declined',
            },
          } satisfies ScheduleResponse;
        }
        const onFile: Instrument = outcome.token
          ? { method: cmd.paymentMethodId, token: outcome.token }
          : instrument;
        if (outcome.token) await setScheduleInstrumentToken(tx, schedule.id, outcome.token);
        const handled = await scheduleHandlers[scheduleMode].onCreated(tx, deps, {
          id: schedule.id,
          scheduleNum: schedule.scheduleNum,
          orgGuid: caller.org.guid,
          uniqueTransactionId: cmd.uniqueTransactionId,
          currency: cmd.currency,
          instrument: onFile,
          plan,
          firstPaymentId: first?.id ?? null,
          timeZone: timezone,
          gateway: deps.gateways.forCaller(caller),
        });
        if (!handled.ok) {
          // The recurrence could not be set up: nothing recurs, and a first payment taken is voided.
          await setScheduleStatus(tx, schedule.id, 'failed');
          if (first)
            await voidInTransaction(tx, deps, caller, first.id, 'the recurrence could not be set up');
          return {
            ...base,
            receiptNum: null,
            scheduleNum: null,
            scheduleTotal: null,
            paymentStatus: 'Failed',
            responseTitle: 'Schedule not created: the recurrence could not be set up',
            error: { errorCode: handled.code, message: handled.message },
          } satisfies ScheduleResponse;
        }
        if (webhooksFor(caller)) {
          const facts: ScheduleFacts = {
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
            firstPayment: first?.facts ?? null,
          };
          await insertEvent(tx, caller.org.id, 'schedule', scheduleWebhookBody(facts), now);
        }
        return {
          ...base,
          scheduleNum: schedule.scheduleNum,
          scheduleTotal: fromMinorUnits(amounts.totalMinor),
          paymentStatus: 'Success',
          responseTitle: startsToday
            ? 'Schedule created; first payment approved'
            : `Schedule created; first payment on ${cmd.startDate}`,
          error: NO_ERROR,
        } satisfies ScheduleResponse;
      },
    ),
  );
}
