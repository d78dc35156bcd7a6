import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from './app.tsx';
import { applyLanguage, i18n } from './i18n/index.ts';

type Route = (
  method: string,
  path: string,
) => { status: number; body?: unknown; headers?: Record<string, string> };

function serve(route: Route) {
  const calls: string[] = [];
  vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
    const path = String(url).replace('/console/api', '');
    calls.push(`${init?.method ?? 'GET'} ${path}`);
    const r = route(init?.method ?? 'GET', path);
    return new Response(r.body === undefined ? null : JSON.stringify(r.body), {
      status: r.status,
      headers: { 'content-type': 'application/json', ...r.headers },
    });
  });
  return calls;
}

const USER = {
  userId: 1,
  email: 'sarah@example.org',
  name: 'Sarah',
  role: 'owner',
  orgGuid: 'g',
  orgName: 'Beth Israel',
};
const unauthorized = { status: 401, body: { error: { errorCode: 'UNAUTHORIZED', message: 'no session' } } };

function renderApp() {
  return render(
    <I18nextProvider i18n={i18n}>
      <App />
    </I18nextProvider>,
  );
}

async function signIn(password: string) {
  fireEvent.change(await screen.findByLabelText('E-mail'), { target: { value: 'sarah@example.org' } });
  fireEvent.change(screen.getByLabelText('Password'), { target: { value: password } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
}

describe('signing in', () => {
  beforeEach(() => {
    window.location.hash = '';
    return applyLanguage('en');
  });
  afterEach(() => {
    cleanup();
    vi.unstubAllGlobals();
  });

  it('says a wrong password and a lock-out apart', async () => {
    let attempt = 0;
    serve((method, path) => {
      if (path === '/session' && method === 'GET') return unauthorized;
      attempt++;
      return attempt === 1
        ? {
            status: 401,
            body: {
              error: { errorCode: 'INVALID_CREDENTIALS', message: 'Wrong e-mail address or password' },
            },
          }
        : {
            status: 429,
            body: { error: { errorCode: 'LOCKED_OUT', message: 'wait' } },
            headers: { 'Retry-After': '900' },
          };
    });
    renderApp();
    await signIn('wrong');
    expect((await screen.findByTestId('sign-in-error')).textContent).toBe(
      'Wrong e-mail address or password.',
    );
    await signIn('wrong again');
    await waitFor(() =>
      expect(screen.getByTestId('sign-in-error').textContent).toBe(
        'Too many failed attempts: try again in 15 minutes, or reset your password.',
      ),
    );
  });

  it('signs in, sends the CSRF token it was given, and goes back to sign-in when the session ends (401)', async () => {
    let signedIn = false;
    let sessionGone = false;
    const headers: Array<string | null> = [];
    const calls = serve((method, path) => {
      if (path === '/session' && method === 'GET')
        return signedIn ? { status: 200, body: { user: USER, csrfToken: 'c1' } } : unauthorized;
      if (path === '/session' && method === 'POST') {
        signedIn = true;
        return { status: 200, body: { user: USER, csrfToken: 'csrf-from-sign-in' } };
      }
      if (sessionGone) return unauthorized;
      if (path === '/settings')
        return {
          status: 200,
          body: { name: 'Beth Israel', currencies: ['USD'], settings: { timezone: 'America/New_York' } },
        };
      return { status: 200, body: {} };
    });
    const fetchMock = globalThis.fetch;
    vi.stubGlobal('fetch', async (url: string, init?: RequestInit) => {
      if (init?.method && init.method !== 'GET')
        headers.push((init.headers as Record<string, string>)['x-csrf-token'] ?? null);
      return fetchMock(url, init);
    });
    renderApp();
    await signIn('right');
    expect((await screen.findByTestId('signed-in-as')).textContent).toContain('Sarah');
    // Sign out: a changing request, with the CSRF token the sign-in answered (the sign-in itself had none).
    sessionGone = true;
    fireEvent.click(screen.getByTestId('sign-out'));
    await screen.findByRole('heading', { name: 'Sign in' });
    expect(headers).toEqual([null, 'csrf-from-sign-in']);
    expect(calls).toContain('DELETE /session');
  });

  it('a call answered 401 in the middle of the work sends the user to sign-in', async () => {
    let expired = false;
    serve((method, path) => {
      if (path === '/session' && method === 'GET')
        return { status: 200, body: { user: USER, csrfToken: 'c1' } };
      if (expired) return unauthorized;
      return {
        status: 200,
        body: { name: 'Beth Israel', currencies: ['USD'], settings: { timezone: 'UTC' } },
      };
    });
    renderApp();
    await screen.findByTestId('signed-in-as');
    expired = true;
    window.location.hash = '#/settings';
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    await screen.findByRole('heading', { name: 'Sign in' });
  });
});
