/**
 * The sandbox gateway: deterministic outcomes for the documented test instruments
 * (`SANDBOX_INSTRUMENTS` in @kupah/instruments), no network. It never sees more than it needs
 * and keeps nothing but idempotency results in memory.
 */
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { type SandboxOutcome, sandboxOutcome } from '@kupah/instruments';
import type { Gateway, GatewayResult, Instrument } from './gateway.ts';

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
export function sandboxGateway(opts: { rememberResults?: number; journalFile?: string } = {}): Gateway {
  const limit = opts.rememberResults ?? 100_000;
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
    async authorize(req) {
      return once(`auth:${req.idempotencyKey}`, () => {
        const outcome = outcomeOf(req.instrument);
        const token = 'token' in req.instrument ? req.instrument.token : null;
        const r = result(outcome, outcome === 'Error' ? null : `sbx_ch_${hex(10)}`, token === null);
        return token && outcome === 'Success' ? { ...r, token } : r;
      });
    },
    async tokenize(req) {
      return once(`tok:${req.idempotencyKey}`, () =>
        result(outcomeOf(req.instrument), `sbx_vf_${hex(10)}`, true),
      );
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
    async setupRecurring(req) {
      return once(`rec:${req.idempotencyKey}`, () => {
        // The recurrence remembers how its instrument behaves, as a real gateway's stored card would.
        const outcome = outcomeOf(req.instrument);
        return result(outcome, outcome === 'Success' ? `sbx_sub_${letter(outcome)}_${hex(8)}` : null, false);
      });
    },
    async recurringCharge(req) {
      return once(`recch:${req.idempotencyKey}`, () => {
        const m = SUBSCRIPTION.exec(req.recurringRef);
        const outcome: SandboxOutcome = !m
          ? 'Error'
          : m[1] === 's'
            ? 'Success'
            : m[1] === 'd'
              ? 'Declined'
              : 'Error';
        return result(outcome, outcome === 'Error' ? null : `sbx_ch_${hex(10)}`, false);
      });
    },
  };
}
