/**
 * Every call to a gateway goes through here: bounded concurrency (per organisation and per
 * gateway, so one busy organisation or one slow gateway cannot take every slot) and a time-out
 * that aborts the call. No database transaction or pooled connection is ever held across it.
 */
import { GatewayOutcomeUnknown, type GatewayResult, GatewayUnreachable } from './gateway.ts';

export interface GatewayCallPolicy {
  /** A call that has not answered after this long is aborted and its outcome is in doubt. */
  timeoutMs: number;
  /** Calls of one organisation in flight at once (more wait their turn). */
  perOrg: number;
  /** Calls to one gateway (by name) in flight at once, all organisations together. */
  perGateway: number;
  /**
   * How long after an in-doubt call recovery first asks the gateway what happened (a gateway may
   * finish a request after the caller gave up on it).
   */
  settleMs: number;
  /**
   * How long a request waits for the outcome of another request with the same
   * uniqueTransactionId before answering 409 REQUEST_IN_PROGRESS.
   */
  waitForOutcomeMs: number;
}

export const DEFAULT_GATEWAY_POLICY: GatewayCallPolicy = {
  timeoutMs: 30_000,
  perOrg: 256,
  perGateway: 1024,
  settleMs: 30_000,
  waitForOutcomeMs: 10_000,
};

/** How a call ended. */
export type CallOutcome<T = GatewayResult> =
  | { kind: 'answered'; result: T }
  /** Certainly not sent: nothing was charged. */
  | { kind: 'unreachable'; reason: string }
  /** Perhaps sent, answer unknown: the payment stays Pending until recovery learns the outcome. */
  | { kind: 'in_doubt'; reason: string };

class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly max: number) {}
  async acquire(): Promise<void> {
    if (this.active < this.max) {
      this.active++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }
  release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
  get idle(): boolean {
    return this.active === 0 && this.waiting.length === 0;
  }
}

const reasonOf = (err: unknown): string =>
  err instanceof Error ? `${err.name}: ${err.message}` : String(err);

export function gatewayCalls(policy: Partial<GatewayCallPolicy> = {}) {
  const p: GatewayCallPolicy = { ...DEFAULT_GATEWAY_POLICY, ...policy };
  const byOrg = new Map<number, Semaphore>();
  const byGateway = new Map<string, Semaphore>();
  const slot = <K>(map: Map<K, Semaphore>, key: K, max: number): Semaphore => {
    const held = map.get(key);
    if (held) return held;
    const s = new Semaphore(max);
    map.set(key, s);
    return s;
  };
  const drop = <K>(map: Map<K, Semaphore>, key: K, s: Semaphore) => {
    if (s.idle) map.delete(key);
  };

  /**
   * Run one gateway call under the limits and the time-out; never throws. The time-out counts from
   * the moment the call is asked for, waiting for a slot included: a call still waiting when it
   * expires is never sent (`unreachable`), so no call outlives `timeoutMs` (recovery relies on it).
   */
  async function call<T = GatewayResult>(
    orgId: number,
    gatewayName: string,
    fn: (signal: AbortSignal) => Promise<T>,
  ): Promise<CallOutcome<T>> {
    const deadline = Date.now() + p.timeoutMs;
    const org = slot(byOrg, orgId, p.perOrg);
    const gw = slot(byGateway, gatewayName, p.perGateway);
    await org.acquire();
    await gw.acquire();
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    try {
      const left = deadline - Date.now();
      if (left <= 0) return { kind: 'unreachable', reason: `no free gateway slot within ${p.timeoutMs} ms` };
      const timedOut = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new GatewayOutcomeUnknown(`no answer within ${p.timeoutMs} ms`);
          abort.abort(err);
          reject(err);
        }, left);
      });
      const result = await Promise.race([fn(abort.signal), timedOut]);
      return { kind: 'answered', result };
    } catch (err) {
      if (err instanceof GatewayUnreachable) return { kind: 'unreachable', reason: reasonOf(err) };
      return { kind: 'in_doubt', reason: reasonOf(err) };
    } finally {
      clearTimeout(timer);
      gw.release();
      org.release();
      drop(byGateway, gatewayName, gw);
      drop(byOrg, orgId, org);
    }
  }

  return { policy: p, call };
}
export type GatewayCalls = ReturnType<typeof gatewayCalls>;
