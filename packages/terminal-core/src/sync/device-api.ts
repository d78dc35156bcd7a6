/**
 * The device-sync endpoints over HTTP (pair, push, pull, shift close, receipt), with a time limit on every call and
 * every answer checked against the contracts' schemas. Failures are sorted into what the sync
 * loop must do about them: try later (network, time-out, 5xx, 429, an answer that is not the
 * contract's), stop (403 DEVICE_REVOKED), or tell someone (401, other 4xx).
 */
import {
  type DeviceReceiptSendRequest,
  type PairRequest,
  type PairResponse,
  type PullResponse,
  type PushRequest,
  type PushResponse,
  pairResponse,
  pullResponse,
  pushResponse,
  type ReceiptSendResponse,
  receiptSendResponse,
  type ShiftCloseRequest,
  type ShiftCloseResponse,
  shiftCloseResponse,
} from '@kupah/contracts';
import type { z } from 'zod';

export type DeviceApiFailure =
  /** No answer: offline, refused, DNS, TLS. */
  | 'network'
  /** No answer within the time limit. */
  | 'timeout'
  /** An HTTP error status (see `status`, `errorCode`). */
  | 'http'
  /** A 200 whose body is not what the contract says. */
  | 'protocol';

export class DeviceApiError extends Error {
  constructor(
    readonly failure: DeviceApiFailure,
    message: string,
    readonly status: number | null = null,
    readonly errorCode: string | null = null,
    readonly fields: { field: string; message: string }[] = [],
    /** From `Retry-After` on 429/503, in milliseconds. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
    this.name = 'DeviceApiError';
  }

  /** Sending the same request again later may succeed. */
  get transient(): boolean {
    return (
      this.failure !== 'http' ||
      this.status === null ||
      this.status >= 500 ||
      this.status === 429 ||
      this.status === 408
    );
  }
}

export interface DeviceApi {
  pair(serverUrl: string, body: PairRequest): Promise<PairResponse>;
  push(serverUrl: string, credential: string, body: PushRequest): Promise<PushResponse>;
  /** Records a shift close (optional: fakes of earlier tests have none). */
  closeShift?(serverUrl: string, credential: string, body: ShiftCloseRequest): Promise<ShiftCloseResponse>;
  /** Asks the server to e-mail the receipt of a payment this device took (optional, as above). */
  sendReceipt?(
    serverUrl: string,
    credential: string,
    body: DeviceReceiptSendRequest,
  ): Promise<ReceiptSendResponse>;
  pull(
    serverUrl: string,
    credential: string,
    cursor: string | null,
    limit: number,
    report?: PullReport,
  ): Promise<PullResponse>;
}

/** What a pull tells the server: the device's own name and its queue after the run's pushes. */
export interface PullReport {
  deviceName: string | null;
  queueDepth: number;
  queueTotalMinor: number;
}

export interface DeviceApiOptions {
  fetch: typeof fetch;
  /** Push answers wait for up to 100 charges at the gateway: a longer limit than the rest. */
  pushTimeoutMs?: number;
  timeoutMs?: number;
}

/** `https://host/` and `https://host` are the same server. */
export const normaliseServerUrl = (url: string): string => url.trim().replace(/\/+$/, '');

function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

async function errorOf(res: Response): Promise<DeviceApiError> {
  let code: string | null = null;
  let message = `The server answered ${res.status}`;
  let fields: { field: string; message: string }[] = [];
  try {
    const body = (await res.json()) as {
      error?: { errorCode?: unknown; message?: unknown; fields?: unknown };
    };
    if (typeof body.error?.errorCode === 'string') code = body.error.errorCode;
    if (typeof body.error?.message === 'string') message = body.error.message;
    if (Array.isArray(body.error?.fields)) fields = body.error.fields as typeof fields;
  } catch {
    // Not JSON (a proxy's error page): the status says enough.
  }
  return new DeviceApiError(
    'http',
    message,
    res.status,
    code,
    fields,
    retryAfterMs(res.headers.get('retry-after')),
  );
}

export function createDeviceApi(opts: DeviceApiOptions): DeviceApi {
  const doFetch = opts.fetch;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const pushTimeoutMs = opts.pushTimeoutMs ?? 120_000;

  async function call<T extends z.ZodType>(
    url: string,
    init: RequestInit,
    schema: T,
    limitMs: number,
  ): Promise<z.output<T>> {
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), limitMs);
    try {
      let res: Response;
      try {
        res = await doFetch(url, { ...init, signal: abort.signal });
      } catch (err) {
        if (abort.signal.aborted)
          throw new DeviceApiError('timeout', `No answer from the server within ${limitMs / 1000} s`);
        throw new DeviceApiError(
          'network',
          `The server cannot be reached (${err instanceof Error ? err.message : 'network error'})`,
        );
      }
      if (!res.ok) throw await errorOf(res);
      let body: unknown;
      try {
        body = await res.json();
      } catch {
        if (abort.signal.aborted)
          throw new DeviceApiError('timeout', `The answer did not arrive within ${limitMs / 1000} s`);
        throw new DeviceApiError('protocol', 'The server answered something that is not JSON');
      }
      const parsed = schema.safeParse(body);
      if (!parsed.success)
        throw new DeviceApiError('protocol', 'The server answered in a form this terminal does not know');
      return parsed.data;
    } finally {
      clearTimeout(timer);
    }
  }

  const json = (credential: string | null, body: unknown): RequestInit => ({
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(credential ? { authorization: credential } : {}),
    },
    body: JSON.stringify(body),
  });

  return {
    pair: (serverUrl, body) =>
      call(`${normaliseServerUrl(serverUrl)}/v1/Device/Pair`, json(null, body), pairResponse, timeoutMs),
    closeShift: (serverUrl, credential, body) =>
      call(
        `${normaliseServerUrl(serverUrl)}/v1/Device/Shift/Close`,
        json(credential, body),
        shiftCloseResponse,
        timeoutMs,
      ),
    sendReceipt: (serverUrl, credential, body) =>
      call(
        `${normaliseServerUrl(serverUrl)}/v1/Device/Receipt/Send`,
        json(credential, body),
        receiptSendResponse,
        timeoutMs,
      ),
    push: (serverUrl, credential, body) =>
      call(
        `${normaliseServerUrl(serverUrl)}/v1/Device/Sync/Push`,
        json(credential, body),
        pushResponse,
        pushTimeoutMs,
      ),
    pull: (serverUrl, credential, cursor, limit, report) => {
      const q = new URLSearchParams({ limit: String(limit) });
      if (cursor) q.set('cursor', cursor);
      if (report) {
        if (report.deviceName) q.set('deviceName', report.deviceName);
        q.set('queueDepth', String(report.queueDepth));
        q.set('queueTotalMinor', String(report.queueTotalMinor));
      }
      return call(
        `${normaliseServerUrl(serverUrl)}/v1/Device/Sync/Pull?${q}`,
        { method: 'GET', headers: { authorization: credential } },
        pullResponse,
        timeoutMs,
      );
    },
  };
}
