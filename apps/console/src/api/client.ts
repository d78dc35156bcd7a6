/**
 * The console's API client: a thin typed wrapper over fetch for `/console/api/*`. Same-origin
 * cookies carry the session; every request but GET/HEAD carries `X-CSRF-Token`; an error body
 * becomes an `ApiError`; a 401 (the session is gone) calls `onUnauthorized`, which sends the user
 * to sign-in.
 */

export const API_BASE = '/console/api';

export interface ErrorField {
  field: string;
  message: string;
}

/** An answer that was not 2xx, with the server's `{ error: { errorCode, message, fields? } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: string,
    message: string,
    readonly fields: ErrorField[] = [],
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export type Query = Record<string, string | number | boolean | null | undefined>;

export interface ApiClientOptions {
  fetch?: typeof fetch;
  base?: string;
  /** Called on a 401 from any call but the ones that are expected to answer it (sign-in, session). */
  onUnauthorized?: () => void;
}

export function queryString(query: Query | undefined): string {
  if (!query) return '';
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null || v === '') continue;
    params.set(k, String(v));
  }
  const s = params.toString();
  return s ? `?${s}` : '';
}

async function toError(res: Response): Promise<ApiError> {
  let code = `HTTP_${res.status}`;
  let message = res.statusText || `HTTP ${res.status}`;
  let fields: ErrorField[] = [];
  try {
    const body = (await res.json()) as {
      error?: { errorCode?: string; message?: string; fields?: ErrorField[] };
    };
    if (body?.error) {
      code = body.error.errorCode ?? code;
      message = body.error.message ?? message;
      fields = body.error.fields ?? [];
    }
  } catch {
    // Not JSON (a proxy's page): keep the status.
  }
  const retry = Number(res.headers.get('Retry-After'));
  return new ApiError(res.status, code, message, fields, Number.isFinite(retry) && retry > 0 ? retry : null);
}

export function createApiClient(opts: ApiClientOptions = {}) {
  const doFetch = opts.fetch ?? ((...a: Parameters<typeof fetch>) => fetch(...a));
  const base = opts.base ?? API_BASE;
  let csrfToken: string | null = null;

  async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    options: { query?: Query; expectUnauthorized?: boolean } = {},
  ): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD' && csrfToken) headers['x-csrf-token'] = csrfToken;
    const res = await doFetch(`${base}${path}${queryString(options.query)}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) {
      const err = await toError(res);
      if (res.status === 401 && !options.expectUnauthorized) opts.onUnauthorized?.();
      throw err;
    }
    if (res.status === 204) return undefined as T;
    const text = await res.text();
    return (text ? JSON.parse(text) : undefined) as T;
  }

  return {
    setCsrfToken(token: string | null) {
      csrfToken = token;
    },
    get csrfToken() {
      return csrfToken;
    },
    /** A link the browser follows itself (a CSV download): same origin, the cookie goes with it. */
    href(path: string, query?: Query) {
      return `${base}${path}${queryString(query)}`;
    },
    get: <T>(path: string, query?: Query, o?: { expectUnauthorized?: boolean }) =>
      request<T>('GET', path, undefined, { query, ...o }),
    post: <T>(path: string, body: unknown = {}, o?: { expectUnauthorized?: boolean }) =>
      request<T>('POST', path, body, o),
    put: <T>(path: string, body: unknown) => request<T>('PUT', path, body),
    patch: <T>(path: string, body: unknown) => request<T>('PATCH', path, body),
    del: <T>(path: string) => request<T>('DELETE', path),
  };
}

export type ApiClient = ReturnType<typeof createApiClient>;
