/**
 * ScheduleHandlingMode (section 3): what happens to a schedule after it is stored, in the creating
 * transaction. `Integration`: the partner runs the recurrence from the schedule webhook.
 * `Internal`: the instalment plan is stored and the recurring scheduler charges each instalment.
 * `Gateway`: the plan is handed to the gateway, which runs the recurrence and reports each charge.
 */
import type { Currency, ScheduleHandlingMode } from '@kupah/contracts';
import type { Instalment } from '@kupah/schedule';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Gateway, Instrument } from '../gateway/gateway.ts';
import { insertInstalments, markInstalmentCharged, setScheduleGatewayRef } from './repo.ts';

export interface CreatedSchedule {
  id: number;
  scheduleNum: number;
  orgGuid: string;
  uniqueTransactionId: string;
  currency: Currency;
  /** The instrument as the gateway knows it now (a card-on-file token once verified or charged). */
  instrument: Instrument;
  plan: readonly Instalment[];
  /** The first instalment's payment, when it was charged at creation. */
  firstPaymentId: number | null;
  /** The org's time zone: an instalment falls due at the start of its date there. */
  timeZone: string;
  gateway: Gateway | null;
}

export type HandlerResult = { ok: true } | { ok: false; code: string; message: string };

export interface ScheduleHandler {
  onCreated(tx: Sql, deps: Deps, schedule: CreatedSchedule): Promise<HandlerResult>;
}

async function storePlan(tx: Sql, s: CreatedSchedule): Promise<void> {
  await insertInstalments(
    tx,
    s.id,
    s.plan.map((i) => ({
      sequence: i.sequence,
      dueDate: i.dueDate,
      nominalDate: i.nominalDate,
      hebrewDate: i.hebrewDate,
      amountMinor: i.amountMinor,
    })),
    s.timeZone,
  );
  if (s.firstPaymentId !== null) await markInstalmentCharged(tx, s.id, 1, s.firstPaymentId);
}

export const scheduleHandlers: Record<ScheduleHandlingMode, ScheduleHandler> = {
  Integration: { onCreated: async () => ({ ok: true }) },
  Internal: {
    async onCreated(tx, _deps, s) {
      await storePlan(tx, s);
      return { ok: true };
    },
  },
  Gateway: {
    async onCreated(tx, _deps, s) {
      if (!s.gateway)
        return { ok: false, code: 'GATEWAY_NOT_CONFIGURED', message: 'No gateway for this credential' };
      const rest = s.plan.filter((i) => i.sequence > 1 || s.firstPaymentId === null);
      const r = await s.gateway.setupRecurring({
        idempotencyKey: `${s.orgGuid}:${s.uniqueTransactionId}:recurring`,
        instrument: s.instrument,
        currency: s.currency,
        instalments: rest.map((i) => ({
          sequence: i.sequence,
          dueDate: i.dueDate,
          amountMinor: i.amountMinor,
        })),
      });
      if (r.status !== 'Success' || !r.gatewayRef) {
        return {
          ok: false,
          code: r.code ?? 'GATEWAY_ERROR',
          message: r.message ?? 'The gateway refused the recurrence',
        };
      }
      await setScheduleGatewayRef(tx, s.id, r.gatewayRef);
      await storePlan(tx, s);
      return { ok: true };
    },
  },
};
