/**
 * The loop of the workers that send what a transaction wrote (the webhook dispatcher, the receipt
 * mailer): claim a batch of due rows (each claim is a lease, safe with any number of instances on
 * one PostgreSQL), deliver them outside any transaction, go again at once while batches come back
 * full, else wait for a NOTIFY on the channel (sent when the rows commit) or the poll interval.
 * What a delivery is, and how its outcome is recorded, is the worker's own.
 */
import type { Deps } from '../deps.ts';

export interface WorkerLoopOptions<T extends { id: number }> {
  /** The NOTIFY channel the writing transaction signals. */
  channel: string;
  batchSize: number;
  pollMs: number;
  leaseMs: number;
  /** Claims up to `limit` due rows until `leaseUntil`. */
  claim(now: Date, leaseUntil: Date, limit: number): Promise<T[]>;
  /** Sends one claimed row and records its outcome. */
  deliver(row: T): Promise<void>;
  /** Refreshes the worker's pending gauge (at most every 5 s, while it is not busy). */
  refreshPending(): Promise<void>;
  /** Logged when a delivery throws (its outcome was not recorded) and when a run fails. */
  messages: { deliveryFailed: string; loopFailed: string };
  /** Done in `start()` before the first claim. */
  beforeStart?(): Promise<unknown>;
}

export function workerLoop<T extends { id: number }>(deps: Deps, o: WorkerLoopOptions<T>) {
  const { logger } = deps;
  let stopped = true;
  let wake: (() => void) | null = null;
  let woken = false;
  let loop: Promise<void> | null = null;
  let unlisten: (() => Promise<void>) | null = null;

  /** Claim and deliver one batch; returns how many were claimed. */
  async function runOnce(): Promise<number> {
    const now = deps.now();
    const claimed = await o.claim(now, new Date(now.getTime() + o.leaseMs), o.batchSize);
    await Promise.all(
      claimed.map((row) =>
        o
          .deliver(row)
          .catch((err) => logger.error({ err: String(err), deliveryId: row.id }, o.messages.deliveryFailed)),
      ),
    );
    return claimed.length;
  }

  /** Run until nothing is due now (tests call this after moving the clock). */
  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await runOnce();
      total += n;
      if (n === 0) return total;
    }
  }

  function nudge() {
    woken = true;
    wake?.();
  }

  async function run() {
    let lastCount = 0;
    while (!stopped) {
      try {
        const n = await runOnce();
        if (n === o.batchSize) continue;
        if (Date.now() - lastCount > 5000) {
          lastCount = Date.now();
          await o.refreshPending();
        }
      } catch (err) {
        logger.error({ err: String(err) }, o.messages.loopFailed);
      }
      if (stopped) break;
      if (!woken) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, o.pollMs);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      wake = null;
      woken = false;
    }
  }

  return {
    runOnce,
    drain,
    nudge,
    async start() {
      if (!stopped) return;
      await o.beforeStart?.();
      stopped = false;
      unlisten = await deps.db.listen(o.channel, nudge).catch((err) => {
        logger.warn({ err: String(err) }, 'LISTEN unavailable; polling only');
        return null;
      });
      loop = run();
    },
    /** Stop claiming; wait for the deliveries in flight to be recorded. */
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await unlisten?.();
    },
  };
}
