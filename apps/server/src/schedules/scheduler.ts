/**
 * The recurring scheduler: a worker inside each server process that charges the due instalments
 * of `Internal` schedules and records the charges a gateway reports for `Gateway` schedules.
 * Each instalment is claimed with FOR UPDATE SKIP LOCKED together with its Pending payment
 * (status `charging`), charged outside any transaction, and recorded; several instances, restarts
 * and catch-up after downtime never charge twice (a partial unique index allows one successful
 * payment per instalment at most), and an instalment whose outcome is in doubt is finished by
 * the recovery worker.
 */
import type { Currency, PaymentMethodId } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import { findCampaignById, findReasonById } from '../catalog/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { GatewayResult, Instrument } from '../gateway/gateway.ts';
import { toOrg } from '../orgs/repo.ts';
import type { DeviceFacts } from '../outbox/payloads.ts';
import type { Parties } from '../payments/parties.ts';
import {
  type ClaimedPayment,
  claimPayment,
  leaveInDoubt,
  recordPayment,
  releaseClaim,
  sendPayment,
} from '../payments/payment-service.ts';
import { findPersonById } from '../people/repo.ts';
import {
  claimDueInstalments,
  completeIfSettled,
  loadScheduleForCharge,
  markInstalmentChargedById,
  markInstalmentCharging,
  markInstalmentFailed,
  type ScheduleForCharge,
  tryLockSchedule,
} from './repo.ts';

/** A declined instalment is tried again 1 day later, then 2 days after that (3 days after the first try). */
export const INSTALMENT_RETRY_DAYS = [1, 2] as const;

const NO_DEVICE: DeviceFacts = { deviceName: null, timezone: null, deviceCreatedDate: null, location: null };

async function partiesOf(tx: Sql, s: ScheduleForCharge): Promise<Parties> {
  const reasons: Parties['reasons'] = [];
  for (const r of s.reasons) {
    const reason = await findReasonById(tx, r.reasonId);
    if (reason) reasons.push({ reason, amountMinor: r.amountMinor });
  }
  return {
    donor: s.donorId === null ? null : await findPersonById(tx, 'donor', s.donorId),
    donorCreated: false,
    campaign: s.campaignId === null ? null : await findCampaignById(tx, s.campaignId),
    reasons,
    collector: s.collectorId === null ? null : await findPersonById(tx, 'collector', s.collectorId),
  };
}

function callerOf(s: ScheduleForCharge): Caller {
  return {
    type: s.credential.type,
    id: s.credential.id,
    sandbox: s.credential.sandbox,
    masked: s.credential.masked,
    sourceKind: s.credential.kind,
    sourceName: s.credential.name,
    org: toOrg(s.org),
  };
}

/**
 * Record an instalment's payment and what follows for the instalment: charged, or failed with a
 * retry 1 then 2 days later. Recovery calls it too, for an instalment whose outcome was in doubt.
 */
export async function finishInstalment(
  tx: Sql,
  deps: Deps,
  claimed: ClaimedPayment,
  result: GatewayResult,
): Promise<void> {
  const purpose = claimed.context.purpose;
  if (purpose.kind !== 'instalment') throw new Error('not an instalment');
  const paid = await recordPayment(tx, deps, claimed, result);
  if (!paid) return;
  if (paid.status === 'Success') {
    await markInstalmentChargedById(tx, purpose.instalmentId, paid.id);
  } else {
    const days = INSTALMENT_RETRY_DAYS[purpose.attempts];
    const retryAt = days === undefined ? null : new Date(deps.now().getTime() + days * 86_400_000);
    await markInstalmentFailed(
      tx,
      purpose.instalmentId,
      `${paid.errorCode ?? paid.status}: ${paid.errorMessage ?? ''}`.trim(),
      retryAt,
    );
  }
  await completeIfSettled(tx, purpose.scheduleId);
}

export interface SchedulerOptions {
  pollMs?: number;
  /** Instalments charged in parallel by this instance. */
  concurrency?: number;
}

export function recurringScheduler(deps: Deps, opts: SchedulerOptions = {}) {
  const pollMs = opts.pollMs ?? 5000;
  const concurrency = opts.concurrency ?? 4;
  const { db, logger } = deps;
  let stopped = true;
  let loops: Promise<void>[] = [];
  const wakers = new Set<() => void>();

  /**
   * Charge one due instalment: claim it with its Pending payment (one transaction), call the
   * gateway outside any transaction, record the outcome (another). False when none is due (or
   * the next one's schedule is busy being changed right now).
   */
  async function chargeOne(): Promise<boolean> {
    const claim = await db.transaction(async (tx) => {
      const [due] = await claimDueInstalments(tx, deps.now(), 1);
      if (!due) return null;
      const lock = await tryLockSchedule(tx, due.scheduleId);
      if (lock === 'busy') return null;
      if (lock === 'inactive') {
        // Cannot happen through the API (pausing and cancelling move the instalments too): never charge it.
        await markInstalmentFailed(tx, due.id, 'the schedule is not active', null);
        return 'settled' as const;
      }
      const s = await loadScheduleForCharge(tx, due.scheduleId);
      const caller = callerOf(s);
      const gateway = await deps.gateways.forCaller(caller, tx);
      const attempt = due.attempts + 1;
      const recurring =
        due.mode === 'Gateway' && s.gatewayRef ? { ref: s.gatewayRef, sequence: due.sequence } : null;
      const instrument: Instrument = { method: s.method as PaymentMethodId, token: s.instrument.token ?? '' };
      const claimed = await claimPayment(
        tx,
        deps,
        {
          caller,
          amountMinor: due.amountMinor,
          currency: s.currency as Currency,
          method: s.method as PaymentMethodId,
          instrument,
          display: {
            brand: s.instrument.brand,
            last4: s.instrument.last4,
            expiry: s.instrument.expiry,
            cardHolderName: null,
          },
          parties: await partiesOf(tx, s),
          paymentDate: deps.now().toISOString(),
          note: s.note,
          uniqueTransactionId: `${s.uniqueTransactionId}:${due.sequence}`,
          isAnonymous: s.isAnonymous,
          device: NO_DEVICE,
          scheduleId: s.id,
          instalmentSeq: due.sequence,
          // An instalment's idempotency key is schedule + sequence (+ the attempt, for retries after a decline).
          gatewayKey: `${s.org.guid}:schedule:${s.scheduleNum}:${due.sequence}:${attempt}`,
          recurringRef: recurring?.ref ?? null,
          sendWebhook: true,
          purpose: { kind: 'instalment', instalmentId: due.id, scheduleId: s.id, attempts: due.attempts },
        },
        gateway?.name ?? 'None',
      );
      await markInstalmentCharging(tx, due.id, claimed.id);
      return { claimed, gateway, instrument, recurring, due };
    });
    if (claim === null) return false;
    if (claim === 'settled') return true;
    const { claimed, gateway, instrument, recurring } = claim;
    const outcome = await sendPayment(deps, gateway, claimed, instrument, recurring);
    if (outcome.kind === 'in_doubt') {
      await leaveInDoubt(deps, claimed, outcome.reason);
    } else if (outcome.kind === 'unreachable') {
      // Nothing was charged: the instalment is due again shortly, and this was not an attempt.
      await db.transaction((tx) => releaseClaim(tx, deps, claimed));
    } else {
      await db.transaction((tx) => finishInstalment(tx, deps, claimed, outcome.result));
    }
    return true;
  }

  /** Charge until nothing is due (tests call this after moving the clock). */
  async function drain(): Promise<number> {
    let n = 0;
    while (await chargeOne()) n++;
    return n;
  }

  async function loop(): Promise<void> {
    while (!stopped) {
      try {
        if (await chargeOne()) continue;
      } catch (err) {
        logger.error({ err: String(err) }, 'recurring scheduler');
      }
      if (stopped) break;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(t);
          wakers.delete(done);
          resolve();
        };
        const t = setTimeout(done, pollMs);
        wakers.add(done);
      });
    }
  }

  return {
    chargeOne,
    drain,
    start() {
      if (!stopped) return;
      stopped = false;
      loops = Array.from({ length: concurrency }, () => loop());
    },
    async stop() {
      stopped = true;
      for (const w of [...wakers]) w();
      await Promise.all(loops);
    },
  };
}
export type RecurringScheduler = ReturnType<typeof recurringScheduler>;
