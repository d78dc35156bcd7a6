/** Renders a console screen as a signed-in user of a role, with a fake API (test helper). */
import { render } from '@testing-library/react';
import type { ReactNode } from 'react';
import { I18nextProvider } from 'react-i18next';
import { createApiClient } from '../src/api/client.ts';
import type { PaymentDetail, Role } from '../src/api/types.ts';
import { i18n } from '../src/i18n/index.ts';
import { SessionContext } from '../src/session.tsx';

export type Handler = (method: string, path: string, body: unknown) => { status: number; body?: unknown };

export function renderAs(role: Role, ui: ReactNode, handler: Handler = () => ({ status: 200, body: {} })) {
  const calls: Array<{ method: string; path: string; body: unknown }> = [];
  const api = createApiClient({
    fetch: async (url, init) => {
      const path = String(url).replace('/console/api', '');
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      calls.push({ method: init?.method ?? 'GET', path, body });
      const r = handler(init?.method ?? 'GET', path, body);
      return new Response(r.body === undefined ? null : JSON.stringify(r.body), {
        status: r.status,
        headers: { 'content-type': 'application/json' },
      });
    },
  });
  api.setCsrfToken('csrf-test');
  const ctx = {
    api,
    user: { userId: 1, email: `${role}@example.org`, name: null, role, orgGuid: 'g', orgName: 'Beth Israel' },
    settings: null,
    timeZone: 'America/New_York',
    reloadSettings() {},
    signedOut() {},
  };
  const view = render(
    <I18nextProvider i18n={i18n}>
      <SessionContext.Provider value={ctx}>{ui}</SessionContext.Provider>
    </I18nextProvider>,
  );
  return { ...view, calls };
}

export const PAYMENT: PaymentDetail = {
  receiptNum: '1001',
  status: 'Success',
  amount: 180,
  amountMinor: 18000,
  currency: 'USD',
  paymentMethod: 'Credit_Card',
  createdAt: '2026-11-26T14:05:00.000Z',
  processedAt: '2026-11-26T14:05:01.000Z',
  donorId: 'D100001',
  donorName: 'Rivka Stern',
  collectorId: null,
  collectorName: null,
  campaignNumber: 1,
  reasonNumbers: [],
  scheduleNum: null,
  instalment: null,
  source: 'apiKey',
  deviceId: null,
  deviceName: null,
  brand: 'Visa',
  last4Digits: '4242',
  voidedAt: null,
  errorCode: null,
  paymentDate: '2026-11-26',
  uniqueTransactionId: 'u-1',
  note: null,
  isAnonymous: false,
  cardHolderName: 'R Stern',
  donor: {
    accountNum: 'D100001',
    firstName: 'Rivka',
    lastName: 'Stern',
    firstNameHebrew: 'רבקה',
    lastNameHebrew: 'שטרן',
  },
  donorCreated: false,
  collector: null,
  campaign: { campaignNumber: 1, campaignName: 'Building Fund' },
  reasons: [],
  device: null,
  gateway: { gatewayName: 'sandbox', gatewayRefNum: 'SBX-1', errorMessage: null },
  voidReason: null,
  refunds: [],
  refundedAmount: 0,
  refundedMinor: 0,
  webhooks: [],
};
