import { randomUUID } from 'node:crypto';
/**
 * SchedulePreview and the schedule management operations (documented extensions): list with next
 * dates, cancel, pause, resume, and change the payment method.
 */
import type {
  SchedulePreviewCommand,
  SchedulePreviewResponse,
  ScheduleSummary,
  schedulePaymentMethodRequest,
} from '@kupah/contracts';
import { ERROR_CODES, fromMinorUnits } from '@kupah/contracts';
import type { z } from 'zod';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { civilDateIn } from '../orgs/settings.ts';
import { prepareInstrument } from '../payments/instrument.ts';
import { assertCurrency, assertSameOrg } from '../payments/payment-service.ts';
import {
  findScheduleSummary,
  listScheduleSummaries,
  lockSchedule,
  type ScheduleStatus,
  type ScheduleSummaryRow,
  setInstalmentsStatus,
  setScheduleInstrument,
  setScheduleStatus,
} from './repo.ts';
import { assertStartNotPast, planOf } from './schedule-service.ts';

export function toScheduleSummary(r: ScheduleSummaryRow): ScheduleSummary {
  return {
    scheduleNum: r.scheduleNum,
    status: r.status,
    handlingMode: r.mode,
    frequency: r.frequency,
    startDate: r.startDate,
    totalPaymentsCount: r.count,
    scheduleTotal: fromMinorUnits(r.totalMinor),
    firstPaymentAmount: fromMinorUnits(r.firstMinor),
    amountPerPayment: fromMinorUnits(r.perPaymentMinor),
    currency: r.currency,
    paymentMethod: r.method,
    brand: r.brand,
    last4Digits: r.last4,
    donorId: r.donorAccount,
    nextPaymentDate: r.status === 'active' ? r.nextDueDate : null,
    paymentsCharged: r.charged,
    paymentsMissed: r.missed,
  };
}

export function previewSchedule(
  deps: Deps,
  caller: Caller,
  cmd: SchedulePreviewCommand,
): SchedulePreviewResponse {
  assertSameOrg(caller, cmd.orgGuid);
  if (cmd.currency) assertCurrency(caller.org, cmd.currency);
  assertStartNotPast(cmd.startDate, deps.now(), caller.org.settings.timezone);
  const plan = planOf(cmd, caller.org.settings);
  return {
    instalments: plan.map((i) => ({
      sequence: i.sequence,
      dueDate: i.dueDate,
      hebrewDate: i.hebrewDate,
      hebrewDateHebrew: i.hebrewDateHebrew,
      amount: fromMinorUnits(i.amountMinor),
    })),
    total: fromMinorUnits(cmd.amounts.totalMinor),
  };
}

export async function listSchedules(
  deps: Deps,
  caller: Caller,
  q: { orgGuid: string; donorId?: string | undefined; status?: string | undefined; limit: number },
): Promise<{ schedules: ScheduleSummary[] }> {
  assertSameOrg(caller, q.orgGuid);
  const rows = await listScheduleSummaries(deps.db, caller.org.id, {
    donorAccount: q.donorId ?? null,
    status: q.status ?? null,
    limit: q.limit,
  });
  return { schedules: rows.map(toScheduleSummary) };
}

const TRANSITIONS: Record<'cancel' | 'pause' | 'resume', { from: ScheduleStatus[]; to: ScheduleStatus }> = {
  cancel: { from: ['active', 'paused'], to: 'cancelled' },
  pause: { from: ['active'], to: 'paused' },
  resume: { from: ['paused'], to: 'active' },
};

/**
 * Cancel, pause or resume. Locking the schedule row waits for an instalment being charged at this
 * moment; after the commit no instalment of a cancelled or paused schedule is charged. Resuming
 * skips the instalments that fell due while paused (a donor who paused is not charged for them
 * all at once).
 */
export async function changeScheduleState(
  deps: Deps,
  caller: Caller,
  orgGuid: string,
  scheduleNum: number,
  action: 'cancel' | 'pause' | 'resume',
): Promise<ScheduleSummary> {
  assertSameOrg(caller, orgGuid);
  const t = TRANSITIONS[action];
  await deps.db.transaction(async (tx) => {
    const s = await lockSchedule(tx, caller.org.id, scheduleNum);
    if (!s) throw notFound(`Schedule ${scheduleNum}`);
    if (s.status === t.to) return;
    if (!t.from.includes(s.status)) {
      throw new ApiError(
        409,
        ERROR_CODES.INVALID_STATE,
        `Schedule ${scheduleNum} is ${s.status}; it cannot ${action}`,
      );
    }
    await setScheduleStatus(tx, s.id, t.to);
    if (action === 'cancel') await setInstalmentsStatus(tx, s.id, ['pending', 'paused'], 'cancelled');
    if (action === 'pause') await setInstalmentsStatus(tx, s.id, ['pending'], 'paused');
    if (action === 'resume') {
      const today = civilDateIn(deps.now(), caller.org.settings.timezone);
      await setInstalmentsStatus(tx, s.id, ['paused'], 'skipped', today);
      await setInstalmentsStatus(tx, s.id, ['paused'], 'pending');
    }
  });
  const summary = await findScheduleSummary(deps.db, caller.org.id, scheduleNum);
  return toScheduleSummary(summary!);
}

/** Verify a new payment method with the gateway and charge the coming instalments to it. */
export async function changeSchedulePaymentMethod(
  deps: Deps,
  caller: Caller,
  scheduleNum: number,
  cmd: z.output<typeof schedulePaymentMethodRequest>,
): Promise<ScheduleSummary> {
  assertSameOrg(caller, cmd.orgGuid);
  const prepared = prepareInstrument(cmd, deps.now());
  const changeable = (status: string | undefined) => {
    if (status === undefined) throw notFound(`Schedule ${scheduleNum}`);
    if (status !== 'active' && status !== 'paused') {
      throw new ApiError(409, ERROR_CODES.INVALID_STATE, `Schedule ${scheduleNum} is ${status}`);
    }
  };
  changeable((await findScheduleSummary(deps.db, caller.org.id, scheduleNum))?.status);
  // The new method is verified with the gateway outside any transaction, then stored.
  const gateway = await deps.gateways.forCaller(caller);
  if (!gateway) throw new ApiError(409, ERROR_CODES.GATEWAY_NOT_CONFIGURED, 'No gateway for this credential');
  const outcome = await deps.calls.call(caller.org.id, gateway.name, (signal) =>
    gateway.tokenize(
      {
        idempotencyKey: `${caller.org.guid}:schedule:${scheduleNum}:card:${randomUUID()}`,
        instrument: prepared.instrument,
        currency: 'USD',
      },
      { signal },
    ),
  );
  if (outcome.kind !== 'answered') {
    throw new ApiError(
      503,
      ERROR_CODES.GATEWAY_UNAVAILABLE,
      'The gateway did not answer; nothing was changed. Try again.',
      undefined,
      {
        'Retry-After': '5',
      },
    );
  }
  const r = outcome.result;
  if (r.status !== 'Success' || !r.token) {
    throw new ApiError(
      409,
      ERROR_CODES.CARD_DECLINED,
      r.message ?? 'The new payment method was not accepted',
    );
  }
  const token = r.token;
  await deps.db.transaction(async (tx) => {
    const s = await lockSchedule(tx, caller.org.id, scheduleNum);
    changeable(s?.status);
    await setScheduleInstrument(tx, s!.id, cmd.paymentMethodId, {
      brand: prepared.brand,
      last4: prepared.last4,
      expiry: prepared.expiry,
      token,
    });
  });
  const summary = await findScheduleSummary(deps.db, caller.org.id, scheduleNum);
  return toScheduleSummary(summary!);
}
