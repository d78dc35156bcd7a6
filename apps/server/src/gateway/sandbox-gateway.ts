/**
 * The sandbox gateway: deterministic outcomes for the documented test instruments
 * (`SANDBOX_INSTRUMENTS` in @kupah/instruments), no network. It never sees more than it needs
 * and keeps nothing but idempotency results in memory.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { type SandboxOutcome, sandboxOutcome } from '@kupah/instruments';
import {
  type CallOptions,
  type Gateway,
  GatewayOutcomeUnknown,
  type GatewayResult,
  GatewayUnreachable,
  type Instrument,
  type RefundRequest,
} from './gateway.ts';

/**
 * Faults the sandbox can play (sandbox credentials only; tests and benchmarks):
 * - `lost`: the charge is made, then its answer is lost (the caller's outcome is in doubt);
 * - `timeout`: no answer until the caller gives up (nothing charged);
 * - `unreachable`: the request never arrives (nothing charged);
 * - `http-500`: the gateway fails before charging, with an answer that says nothing (in doubt).
 * The same faults play on refunds (`refund`): `lost` refunds, then loses the answer.
 */
export type SandboxFault = 'lost' | 'timeout' | 'unreachable' | 'http-500';
/** The calls a fault can be played on. */
export type SandboxOp = 'authorize' | 'tokenize' | 'recurringCharge' | 'refund';
export const SANDBOX_FAULTS: readonly SandboxFault[] = ['lost', 'timeout', 'unreachable', 'http-500'];

export interface SandboxProfile {
  /** Time every call takes, in ms (a typical card authorisation: 300). */
  latencyMs?: number;
  /** Probability of each fault per charge (authorize, tokenize, recurring charge), e.g. `{ lost: 0.05 }`. */
  faults?: Partial<Record<SandboxFault, number>>;
  /** Tests: choose the fault of one call (overrides `faults`). */
  faultFor?: (op: SandboxOp, idempotencyKey: string) => SandboxFault | null;
  /**
   * Tests: the outcome of a refund (default: approved, except an amount whose cents are 02, declined,
   * or 19, failed, like the sandbox cards ending 0002 and 0119).
   */
  refundOutcome?: (req: RefundRequest) => SandboxOutcome;
  random?: () => number;
}

/**
 * `SANDBOX_GATEWAY_FAULTS`: `lost=0.05,timeout=0.01` (probabilities), or `hang` (every call times
 * out). Throws on anything else.
 */
export function parseSandboxFaults(spec: string | undefined): Partial<Record<SandboxFault, number>> {
  if (!spec?.trim()) return {};
  if (spec.trim() === 'hang') return { timeout: 1 };
  const out: Partial<Record<SandboxFault, number>> = {};
  for (const part of spec.split(',')) {
    const [name, p] = part.split('=').map((x) => x.trim());
    const prob = Number(p);
    if (!SANDBOX_FAULTS.includes(name as SandboxFault) || !(prob >= 0 && prob <= 1)) {
      throw new Error(
        `SANDBOX_GATEWAY_FAULTS: "${part}" is not fault=probability with a fault of ${SANDBOX_FAULTS.join(', ')} (or "hang")`,
      );
    }
    out[name as SandboxFault] = prob;
  }
  return out;
}

const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        reject(signal.reason);
      },
      { once: true },
    );
  });

const TOKEN = /^sbx_tok_([sde])_[0-9a-f]{16}$/;
const SUBSCRIPTION = /^sbx_sub_([sde])_[0-9a-f]{16}$/;
const letter = (o: SandboxOutcome) => (o === 'Success' ? 's' : o === 'Declined' ? 'd' : 'e');
const CODE: Record<SandboxOutcome, [string | null, string | null]> = {
  Success: [null, null],
  Declined: ['CARD_DECLINED', 'The payment was declined by the issuer'],
  Error: ['GATEWAY_ERROR', 'The gateway could not process the payment'],
};

function outcomeOf(instrument: Instrument): SandboxOutcome {
  if ('token' in instrument) {
    const m = TOKEN.exec(instrument.token);
    if (!m) return 'Declined';
    return m[1] === 's' ? 'Success' : m[1] === 'd' ? 'Declined' : 'Error';
  }
  if (instrument.method === 'Credit_Card')
    return sandboxOutcome('Credit_Card', { ccNum: instrument.card.pan });
  if (instrument.method === 'ACH') return sandboxOutcome('ACH', { accountNum: instrument.bank.accountNum });
  return sandboxOutcome(instrument.method, { ccNum: instrument.charity.number });
}

const hex = (n: number) => randomBytes(n).toString('hex');

/**
 * `journalFile` (tests only): every new result is appended to this file before it is returned,
 * and the file is read back at start, so the sandbox keeps its idempotency across a SIGKILL and
 * restart as a real gateway does, and a test can count exactly what was charged.
 */
export function sandboxGateway(
  opts: { rememberResults?: number; journalFile?: string; profile?: SandboxProfile } = {},
): Gateway {
  const limit = opts.rememberResults ?? 100_000;
  const profile = opts.profile ?? {};
  const latency = profile.latencyMs ?? 0;
  const random = profile.random ?? Math.random;
  const pickFault = (op: SandboxOp, key: string): SandboxFault | null => {
    if (profile.faultFor) return profile.faultFor(op, key);
    for (const f of SANDBOX_FAULTS) {
      const p = profile.faults?.[f];
      if (p && random() < p) return f;
    }
    return null;
  };
  /**
   * A charge-like call under the profile: latency, then the fault (if any), then `once`. A call
   * aborted before its latency ran out was never processed.
   */
  const play = async (
    op: SandboxOp,
    key: string,
    signal: AbortSignal | undefined,
    run: () => GatewayResult,
  ): Promise<GatewayResult> => {
    const fault = pickFault(op, key);
    if (fault === 'unreachable') throw new GatewayUnreachable('sandbox: connection refused');
    if (fault === 'timeout') {
      await sleep(2_147_000_000, signal);
    }
    if (latency > 0) await sleep(latency, signal);
    if (fault === 'http-500') throw new GatewayOutcomeUnknown('sandbox: HTTP 500 without a result');
    const result = run();
    if (fault === 'lost') throw new GatewayOutcomeUnknown('sandbox: the answer was lost after the charge');
    return result;
  };
  const seen = new Map<string, GatewayResult>();
  const journal = opts.journalFile;
  if (journal && existsSync(journal)) {
    for (const line of readFileSync(journal, 'utf8').split('\n')) {
      const tab = line.indexOf('\t');
      // A line cut short by a kill was never answered: its charge did not happen.
      if (tab > 0) {
        try {
          seen.set(line.slice(0, tab), JSON.parse(line.slice(tab + 1)) as GatewayResult);
        } catch {}
      }
    }
  }
  const once = (key: string, make: () => GatewayResult): GatewayResult => {
    const prior = seen.get(key);
    if (prior) return prior;
    const result = make();
    if (journal) appendFileSync(journal, `${key}\t${JSON.stringify(result)}\n`);
    seen.set(key, result);
    if (seen.size > limit) seen.delete(seen.keys().next().value!);
    return result;
  };
  const result = (outcome: SandboxOutcome, ref: string | null, withToken: boolean): GatewayResult => {
    const [code, message] = CODE[outcome];
    return {
      status: outcome,
      gatewayRef: ref,
      token: withToken && outcome === 'Success' ? `sbx_tok_${letter(outcome)}_${hex(8)}` : null,
      code,
      message,
    };
  };
  return {
    name: 'Sandbox',
    async authorize(req, callOpts?: CallOptions) {
      return play('authorize', req.idempotencyKey, callOpts?.signal, () =>
        once(`auth:${req.idempotencyKey}`, () => {
          const outcome = outcomeOf(req.instrument);
          const token = 'token' in req.instrument ? req.instrument.token : null;
          const r = result(outcome, outcome === 'Error' ? null : `sbx_ch_${hex(10)}`, token === null);
          return token && outcome === 'Success' ? { ...r, token } : r;
        }),
      );
    },
    async tokenize(req, callOpts?: CallOptions) {
      return play('tokenize', req.idempotencyKey, callOpts?.signal, () =>
        once(`tok:${req.idempotencyKey}`, () => result(outcomeOf(req.instrument), `sbx_vf_${hex(10)}`, true)),
      );
    },
    async lookup(req, callOpts?: CallOptions) {
      if (latency > 0) await sleep(latency, callOpts?.signal);
      const prefixes =
        req.kind === 'tokenize' ? ['tok:'] : req.kind === 'refund' ? ['refund:'] : ['auth:', 'recch:'];
      for (const prefix of prefixes) {
        const found = seen.get(`${prefix}${req.idempotencyKey}`);
        if (found) return found;
      }
      return null;
    },
    async void(req) {
      return once(`void:${req.idempotencyKey}`, () =>
        req.gatewayRef.startsWith('sbx_ch_')
          ? result('Success', `sbx_vd_${hex(10)}`, false)
          : {
              status: 'Error',
              gatewayRef: null,
              token: null,
              code: 'UNKNOWN_CHARGE',
              message: 'No such charge',
            },
      );
    },
    refunds: (method) => method === 'Credit_Card' || method === 'ACH',
    async refund(req, callOpts?: CallOptions) {
      return play('refund', req.idempotencyKey, callOpts?.signal, () =>
        once(`refund:${req.idempotencyKey}`, (): GatewayResult => {
          if (!req.gatewayRef.startsWith('sbx_ch_')) {
            return {
              status: 'Error',
              gatewayRef: null,
              token: null,
              code: 'UNKNOWN_CHARGE',
              message: 'No such charge',
            };
          }
          const cents = req.amountMinor % 100;
          const outcome: SandboxOutcome =
            profile.refundOutcome?.(req) ?? (cents === 2 ? 'Declined' : cents === 19 ? 'Error' : 'Success');
          if (outcome === 'Success') return result('Success', `sbx_rf_${hex(10)}`, false);
          return {
            status: outcome,
            gatewayRef: null,
            token: null,
            code: outcome === 'Declined' ? 'REFUND_DECLINED' : 'GATEWAY_ERROR',
            message:
              outcome === 'Declined' ? 'The refund was declined' : 'The gateway could not process the refund',
          };
        }),
      );
    },
    async setupRecurring(req) {
      return once(`rec:${req.idempotencyKey}`, () => {
        // The recurrence remembers how its instrument behaves, as a real gateway's stored card would.
        const outcome = outcomeOf(req.instrument);
        return result(outcome, outcome === 'Success' ? `sbx_sub_${letter(outcome)}_${hex(8)}` : null, false);
      });
    },
    async recurringCharge(req, callOpts?: CallOptions) {
      return play('recurringCharge', req.idempotencyKey, callOpts?.signal, () =>
        once(`recch:${req.idempotencyKey}`, () => {
          const m = SUBSCRIPTION.exec(req.recurringRef);
          const outcome: SandboxOutcome = !m
            ? 'Error'
            : m[1] === 's'
              ? 'Success'
              : m[1] === 'd'
                ? 'Declined'
                : 'Error';
          return result(outcome, outcome === 'Error' ? null : `sbx_ch_${hex(10)}`, false);
        }),
      );
    },
  };
}
