import { cleanup, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { renderAs } from '../../test/render.tsx';
import { applyLanguage } from '../i18n/index.ts';
import Integrations from './integrations.tsx';

const ANSWERS: Record<string, unknown> = {
  '/integrations': {
    apiKeys: [
      {
        id: 1,
        masked: 'kpk_te****0819',
        name: 'default',
        sandbox: true,
        createdAt: '2026-11-26T00:00:00Z',
        revokedAt: null,
      },
    ],
    sources: [],
    webhooks: [{ kind: 'payment', url: 'https://example.org/hook', disabled: false }],
    gateway: { provider: 'sola', url: null, keyLast4: 'a1b2' },
  },
  '/deliveries': { deliveries: [] },
};

describe('the integrations screen by role', () => {
  beforeEach(() => applyLanguage('en'));
  afterEach(cleanup);
  const answer = (_m: string, path: string) => ({ status: 200, body: ANSWERS[path.split('?')[0]!] ?? {} });

  it('shows a manager webhooks and the masked gateway key, but no API keys, sources or gateway change', async () => {
    renderAs('manager', <Integrations />, answer);
    await screen.findByText('https://example.org/hook');
    expect(screen.getByText('••••••••a1b2')).toBeTruthy();
    expect(screen.queryByText('API keys')).toBeNull();
    expect(screen.queryByRole('button', { name: 'New API key' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Change the gateway' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Rotate secret' })).toBeTruthy();
  });

  it('shows an owner all of them', async () => {
    renderAs('owner', <Integrations />, answer);
    await screen.findByText('https://example.org/hook');
    expect(screen.getByRole('button', { name: 'New API key' })).toBeTruthy();
    expect(screen.getByRole('button', { name: 'Change the gateway' })).toBeTruthy();
    expect(screen.getByText('kpk_te****0819')).toBeTruthy();
  });
});
