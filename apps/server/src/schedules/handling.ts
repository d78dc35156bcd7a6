/**
 * ScheduleHandlingMode (section 3): what happens to a schedule once its first payment (or its
 * verification) succeeded. `Integration`: the partner runs the recurrence from the schedule
 * webhook. `Internal`: the instalment plan is stored and the recurring scheduler charges each
 * instalment. `Gateway`: the plan is handed to the gateway, which runs the recurrence and reports
 * each charge.
 *
 * Each handler has two steps so that no transaction is held across the network: `prepare` may
 * call the gateway (outside any transaction); `store` writes what it prepared, inside the
 * transaction that records the schedule's outcome.
 */
import type { Currency, ScheduleHandlingMode } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Gateway, Instrument } from '../gateway/gateway.ts';
import {
  insertInstalments,
  markInstalmentCharged,
  type PlannedInstalment,
  setScheduleGatewayRef,
} from './repo.ts';

export interface CreatedSchedule {
  id: number;
  orgId: number;
  orgGuid: string;
  uniqueTransactionId: string;
  currency: Currency;
  plan: readonly PlannedInstalment[];
  /** The first instalment's payment, when it was charged at creation. */
  firstPaymentId: number | null;
  /** The org's time zone: an instalment falls due at the start of its date there. */
  timeZone: string;
}

export type Prepared = { ok: true; gatewayRef: string | null } | { ok: false; code: string; message: string };

export interface ScheduleHandler {
  /** Network step (outside any transaction). */
  prepare(
    deps: Deps,
    s: CreatedSchedule,
    gateway: Gateway | null,
    instrument: Instrument | null,
  ): Promise<Prepared>;
  /** Database step (inside the recording transaction). */
  store(tx: Sql, s: CreatedSchedule, prepared: { gatewayRef: string | null }): Promise<void>;
}

async function storePlan(tx: Sql, s: CreatedSchedule): Promise<void> {
  await insertInstalments(tx, s.id, s.plan, s.timeZone);
  if (s.firstPaymentId !== null) await markInstalmentCharged(tx, s.id, 1, s.firstPaymentId);
}

const nothingToPrepare = async (): Promise<Prepared> => ({ ok: true, gatewayRef: null });

export const scheduleHandlers: Record<ScheduleHandlingMode, ScheduleHandler> = {
  Integration: { prepare: nothingToPrepare, store: async () => {} },
  Internal: { prepare: nothingToPrepare, store: (tx, s) => storePlan(tx, s) },
  Gateway: {
    async prepare(deps, s, gateway, instrument) {
      if (!gateway?.setupRecurring) {
        return {
          ok: false,
          code: 'GATEWAY_NOT_CONFIGURED',
          message: `${gateway?.name ?? 'No gateway'} does not run recurrences: use the Internal handling mode`,
        };
      }
      if (!instrument) {
        return { ok: false, code: 'GATEWAY_ERROR', message: 'The gateway returned no card-on-file token' };
      }
      const setup = gateway.setupRecurring.bind(gateway);
      const rest = s.plan.filter((i) => i.sequence > 1 || s.firstPaymentId === null);
      const outcome = await deps.calls.call(s.orgId, gateway.name, (signal) =>
        setup(
          {
            idempotencyKey: `${s.orgGuid}:${s.uniqueTransactionId}:recurring`,
            instrument,
            currency: s.currency,
            instalments: rest.map((i) => ({
              sequence: i.sequence,
              dueDate: i.dueDate,
              amountMinor: i.amountMinor,
            })),
          },
          { signal },
        ),
      );
      if (outcome.kind !== 'answered') {
        return { ok: false, code: 'GATEWAY_ERROR', message: 'The gateway did not confirm the recurrence' };
      }
      const r = outcome.result;
      if (r.status !== 'Success' || !r.gatewayRef) {
        return {
          ok: false,
          code: r.code ?? 'GATEWAY_ERROR',
          message: r.message ?? 'The gateway refused the recurrence',
        };
      }
      return { ok: true, gatewayRef: r.gatewayRef };
    },
    async store(tx, s, prepared) {
      if (prepared.gatewayRef) await setScheduleGatewayRef(tx, s.id, prepared.gatewayRef);
      await storePlan(tx, s);
    },
  },
};
