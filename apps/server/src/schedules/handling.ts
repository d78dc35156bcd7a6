/**
 * The seam for ScheduleHandlingMode (section 3): what happens to a schedule after it is stored.
 * `Integration` hands the recurrence to the partner through the schedule webhook; `Internal`
 * (the service's own scheduler) and `Gateway` (recurrence at the gateway) plug in here.
 */
import type { ScheduleHandlingMode } from '@kupah/contracts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Instrument } from '../gateway/gateway.ts';

export interface CreatedSchedule {
  id: number;
  scheduleNum: number;
  orgId: number;
  mode: ScheduleHandlingMode;
  /** The instrument as the gateway knows it now (a card-on-file token once verified or charged). */
  instrument: Instrument;
  firstPaymentCharged: boolean;
}

export interface ScheduleHandler {
  /** Runs in the creating transaction; throwing rolls the whole schedule back. */
  onCreated(tx: Sql, deps: Deps, schedule: CreatedSchedule): Promise<void>;
}

/** Integration: the partner runs the recurrence from the schedule webhook; nothing more to do here. */
const integration: ScheduleHandler = { onCreated: async () => {} };

/**
 * Handlers by mode. Internal and Gateway keep the stored schedule (status `active`, its mode
 * recorded) for the recurring-charge worker that the schedules engine adds.
 */
export const scheduleHandlers: Record<ScheduleHandlingMode, ScheduleHandler> = {
  Integration: integration,
  Internal: integration,
  Gateway: integration,
};
