import { describe, expect, it, vi } from 'vitest';
import { ApiError, createApiClient } from './client.ts';

function recorder(answer: () => Response) {
  const calls: Array<{ url: string; init: RequestInit }> = [];
  const fetch = vi.fn(async (url: RequestInfo | URL, init?: RequestInit) => {
    calls.push({ url: String(url), init: init ?? {} });
    return answer();
  }) as unknown as typeof globalThis.fetch;
  return { calls, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('the console API client', () => {
  it('sends the CSRF token on every changing request and never on a GET', async () => {
    const r = recorder(() => json(200, { ok: true }));
    const api = createApiClient({ fetch: r.fetch });
    api.setCsrfToken('tok-123');
    await api.get('/payments', { q: 'Stern', status: '', limit: 50 });
    await api.post('/payments/1001/void', { reason: 'duplicate' });
    await api.patch('/settings', {});
    await api.put('/gateway', {});
    await api.del('/session');
    const headers = r.calls.map((c) => (c.init.headers as Record<string, string>)['x-csrf-token']);
    expect(headers).toEqual([undefined, 'tok-123', 'tok-123', 'tok-123', 'tok-123']);
    expect(r.calls.every((c) => c.init.credentials === 'same-origin')).toBe(true);
    // Empty filters are left out of the query.
    expect(r.calls[0]!.url).toBe('/console/api/payments?q=Stern&limit=50');
    expect(r.calls[1]!.init.method).toBe('POST');
    expect(r.calls[1]!.init.body).toBe('{"reason":"duplicate"}');
  });

  it('turns the error body into a typed ApiError', async () => {
    const api = createApiClient({
      fetch: recorder(() =>
        json(400, {
          error: {
            errorCode: 'VALIDATION_FAILED',
            message: 'bad',
            fields: [{ field: 'reason', message: 'required' }],
          },
        }),
      ).fetch,
    });
    const err = (await api.post('/payments/1/void', {}).catch((e) => e)) as ApiError;
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ status: 400, errorCode: 'VALIDATION_FAILED', message: 'bad' });
    expect(err.fields).toEqual([{ field: 'reason', message: 'required' }]);
  });

  it('reads Retry-After of a lock-out', async () => {
    const api = createApiClient({
      fetch: recorder(() =>
        json(429, { error: { errorCode: 'LOCKED_OUT', message: 'wait' } }, { 'Retry-After': '900' }),
      ).fetch,
    });
    const err = await api.post('/session', {}, { expectUnauthorized: true }).catch((e) => e);
    expect(err).toMatchObject({ status: 429, errorCode: 'LOCKED_OUT', retryAfterSeconds: 900 });
  });

  it('sends the user to sign-in on a 401, except where a 401 is the expected answer', async () => {
    const onUnauthorized = vi.fn();
    const api = createApiClient({
      fetch: recorder(() => json(401, { error: { errorCode: 'UNAUTHORIZED', message: 'no session' } })).fetch,
      onUnauthorized,
    });
    await expect(api.get('/dashboard')).rejects.toMatchObject({ status: 401 });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
    await expect(
      api.post('/session', { email: 'a', password: 'b' }, { expectUnauthorized: true }),
    ).rejects.toMatchObject({
      status: 401,
    });
    expect(onUnauthorized).toHaveBeenCalledTimes(1);
  });

  it('keeps the status of an answer that is not JSON', async () => {
    const api = createApiClient({
      fetch: recorder(() => new Response('<html>bad gateway</html>', { status: 502 })).fetch,
    });
    await expect(api.get('/dashboard')).rejects.toMatchObject({ status: 502, errorCode: 'HTTP_502' });
  });
});
