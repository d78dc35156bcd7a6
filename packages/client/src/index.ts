/**
 * The official typed client of the Kupah External API. Its types are generated from the server's
 * OpenAPI document at build time (`npm run generate:client`: openapi-typescript → `schema.d.ts`);
 * requests go through openapi-fetch. What this file adds is ours:
 *
 * - credentials: the source GUID as `Authorization`, the API key as `APIKey` (each operation uses
 *   the one it accepts);
 * - idempotency: a Charge, SchedulePayment or RefundPayment sent without `uniqueTransactionId` gets one (a UUID),
 *   and every retry of that call sends the same one, so a retry can never charge twice;
 * - retries of what is safe to retry: 429 RATE_LIMITED and 409 REQUEST_IN_PROGRESS (after
 *   `Retry-After`), an answer with `PAYMENT_PENDING`, `REFUND_PENDING` or `GATEWAY_UNAVAILABLE` (same id), and
 *   network errors and 5xx for reads and for calls carrying a uniqueTransactionId. Anything else
 *   (a 400, a decline, card-testing blocks) is answered at once. Attempts and waits are bounded.
 */
import createClient from 'openapi-fetch';
import type { components, operations, paths } from './schema.d.ts';

export type { components, operations, paths };
export type Schemas = components['schemas'];

export interface RetryPolicy {
  /** Attempts in all, the first included (default 4; 1 = no retry). */
  attempts: number;
  /** First wait when the answer names none; doubled each time (default 250 ms). */
  baseDelayMs: number;
  /** Longest single wait, Retry-After included: a longer Retry-After is not waited for (default 10 s). */
  maxDelayMs: number;
}

export interface KupahClientOptions {
  /** The server, e.g. https://kupah.example.org */
  baseUrl: string;
  /** The organisation's API key (sent as `APIKey`). */
  apiKey?: string;
  /** A source GUID (sent as `Authorization`): Charge and SchedulePayment of a donation form. */
  sourceGuid?: string;
  retry?: Partial<RetryPolicy>;
  /** A fetch of your own (tests, proxies); default globalThis.fetch. */
  fetch?: (input: Request) => Promise<Response>;
  /** Waits (tests may make them instant). */
  sleep?: (ms: number) => Promise<void>;
  /** Called before each retry. */
  onRetry?: (info: { attempt: number; delayMs: number; reason: string; url: string }) => void;
}

type ChargeBody = operations['charge']['requestBody']['content']['application/json'];
type ScheduleBody = operations['schedulePayment']['requestBody']['content']['application/json'];
type RefundBody = operations['refundPayment']['requestBody']['content']['application/json'];
/** A body whose uniqueTransactionId may be left out: the client makes one. */
export type WithOptionalKey<T> = Omit<T, 'uniqueTransactionId'> & { uniqueTransactionId?: string };

const DEFAULT_RETRY: RetryPolicy = { attempts: 4, baseDelayMs: 250, maxDelayMs: 10_000 };
/** Operations whose body carries the idempotency key. */
const KEYED_PATHS = [
  /\/v1\/External\/Charge$/i,
  /\/v1\/External\/SchedulePayment$/i,
  /\/v1\/External\/RefundPayment$/i,
];
const RETRY_IN_ANSWER = new Set(['PAYMENT_PENDING', 'REFUND_PENDING', 'GATEWAY_UNAVAILABLE']);

/** A fresh idempotency key (what an integrator would otherwise have to remember to make). */
export const newTransactionId = (): string => crypto.randomUUID();

/** Retry-After (seconds or an HTTP date) in ms; null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

async function errorCodeOf(res: Response): Promise<string | null> {
  if (!(res.headers.get('content-type') ?? '').includes('json')) return null;
  try {
    const body = (await res.clone().json()) as { error?: { errorCode?: unknown } };
    return typeof body?.error?.errorCode === 'string' ? body.error.errorCode : null;
  } catch {
    return null;
  }
}

/**
 * The fetch the client runs: adds the idempotency key where it is missing, then sends, retrying
 * what may be retried. The request body is read once and sent again as the same bytes.
 */
export function retryingFetch(opts: KupahClientOptions): (input: Request) => Promise<Response> {
  const policy = { ...DEFAULT_RETRY, ...opts.retry };
  const send = opts.fetch ?? ((r: Request) => globalThis.fetch(r));
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  return async (input) => {
    const url = new URL(input.url);
    const method = input.method.toUpperCase();
    let body = method === 'GET' || method === 'HEAD' ? null : await input.text();
    const keyed = method === 'POST' && KEYED_PATHS.some((re) => re.test(url.pathname));
    if (keyed && body) {
      const parsed = JSON.parse(body) as Record<string, unknown>;
      if (parsed.uniqueTransactionId === undefined || parsed.uniqueTransactionId === null) {
        parsed.uniqueTransactionId = newTransactionId();
        body = JSON.stringify(parsed);
      }
    }
    // Sent twice means the same effect as once: reads, and calls under an idempotency key.
    const repeatable = method === 'GET' || method === 'HEAD' || keyed;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= policy.attempts;
      const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
      let res: Response;
      try {
        res = await send(new Request(input, body === null ? {} : { body }));
      } catch (err) {
        if (!repeatable || last) throw err;
        opts.onRetry?.({ attempt, delayMs: backoff, reason: `network: ${String(err)}`, url: url.pathname });
        await sleep(backoff);
        continue;
      }
      if (last) return res;
      let reason: string | null = null;
      let wait = backoff;
      const code = res.status >= 400 || (keyed && res.status === 200) ? await errorCodeOf(res) : null;
      if (res.status === 429 && code === 'RATE_LIMITED') reason = 'RATE_LIMITED';
      else if (res.status === 409 && code === 'REQUEST_IN_PROGRESS') reason = 'REQUEST_IN_PROGRESS';
      else if (res.status >= 500 && repeatable) reason = `HTTP ${res.status}`;
      else if (keyed && res.status === 200 && code !== null && RETRY_IN_ANSWER.has(code)) reason = code;
      if (reason === null) return res;
      const after = retryAfterMs(res.headers.get('retry-after'));
      if (after !== null) {
        if (after > policy.maxDelayMs) return res; // longer than the caller allows: answer now
        wait = after;
      }
      opts.onRetry?.({ attempt, delayMs: wait, reason, url: url.pathname });
      await res.body?.cancel().catch(() => {});
      await sleep(wait);
    }
  };
}

/**
 * A client of one server: `client.POST('/v1/External/Charge', { body })`, `client.GET(
 * '/v1/External/Payments', { params: { query: { status: 'Success' } } })`, every path, body, query
 * and answer typed from the OpenAPI document.
 */
export function createKupahClient(opts: KupahClientOptions) {
  const headers: Record<string, string> = {};
  if (opts.apiKey) headers.APIKey = opts.apiKey;
  if (opts.sourceGuid) headers.Authorization = opts.sourceGuid;
  const client = createClient<paths, 'application/json'>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ''),
    headers,
    fetch: retryingFetch(opts),
  });
  const keyed = <T extends { uniqueTransactionId?: string }>(body: T) => ({
    ...body,
    uniqueTransactionId: body.uniqueTransactionId ?? newTransactionId(),
  });
  return Object.assign(client, {
    /** POST /v1/External/Charge, with a uniqueTransactionId made when none is given. */
    charge: (body: WithOptionalKey<ChargeBody>) => client.POST('/v1/External/Charge', { body: keyed(body) }),
    /** POST /v1/External/SchedulePayment, with a uniqueTransactionId made when none is given. */
    schedulePayment: (body: WithOptionalKey<ScheduleBody>) =>
      client.POST('/v1/External/SchedulePayment', { body: keyed(body) }),
    /** POST /v1/External/RefundPayment (API key), with a uniqueTransactionId made when none is given. */
    refundPayment: (body: WithOptionalKey<RefundBody>) =>
      client.POST('/v1/External/RefundPayment', { body: keyed(body) }),
  });
}

/** A client made by createKupahClient. */
export type KupahClient = ReturnType<typeof createKupahClient>;
