import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it } from 'vitest';
import { renderAs } from '../../test/render.tsx';
import type { ScheduleDetail } from '../api/types.ts';
import { applyLanguage } from '../i18n/index.ts';
import Schedules from './schedules.tsx';

const DETAIL: ScheduleDetail = {
  schedule: {
    scheduleNum: 7,
    status: 'active',
    handlingMode: 'Internal',
    frequency: 'Monthly_Hebrew',
    startDate: '2026-11-26',
    totalPaymentsCount: 12,
    scheduleTotal: 216,
    firstPaymentAmount: 18,
    amountPerPayment: 18,
    currency: 'ILS',
    paymentMethod: 'Credit_Card',
    brand: 'Visa',
    last4Digits: '4242',
    donorId: 'D100001',
    nextPaymentDate: '2026-12-25',
    paymentsCharged: 1,
    paymentsMissed: 1,
  },
  upcoming: [
    {
      sequence: 2,
      dueDate: '2026-12-25',
      nominalDate: '2026-12-25',
      hebrewDate: '5 Tevet 5787',
      hebrewDateHebrew: 'ה׳ טבת תשפ״ז',
      amountMinor: 1800,
      status: 'pending',
      attempts: 0,
      lastError: null,
      receiptNum: null,
    },
  ],
  instalments: [],
  failures: [
    {
      receiptNum: 'R100009',
      status: 'Declined',
      amountMinor: 1800,
      currency: 'ILS',
      instalment: 1,
      errorCode: 'DECLINED',
      errorMessage: 'Insufficient funds',
      createdAt: '2026-11-26T10:00:00Z',
    },
  ],
};

describe('a schedule', () => {
  afterEach(async () => {
    cleanup();
    await applyLanguage('en');
  });
  const answer = (method: string) =>
    method === 'GET' ? { status: 200, body: DETAIL } : { status: 200, body: {} };

  it('shows its upcoming payments with civil and Hebrew dates, and its failures', async () => {
    await applyLanguage('he');
    renderAs('viewer', <Schedules scheduleNum="7" />, answer);
    await screen.findByText('ה׳ טבת תשפ״ז');
    expect(screen.getByText('Insufficient funds')).toBeTruthy();
    expect(screen.getByText('חודשי (לוח עברי)', { selector: 'dd' })).toBeTruthy();
    // A viewer cannot pause, resume or cancel.
    expect(screen.queryByRole('button', { name: 'השהיה' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'ביטול ההוראה' })).toBeNull();
  });

  it('lets a manager pause it after confirming', async () => {
    await applyLanguage('en');
    const { calls } = renderAs('manager', <Schedules scheduleNum="7" />, answer);
    fireEvent.click(await screen.findByRole('button', { name: 'Pause' }));
    const dialog = await screen.findByRole('dialog');
    fireEvent.submit(dialog.querySelector('form')!);
    await waitFor(() => expect(calls.some((c) => c.method === 'POST')).toBe(true));
    expect(calls.filter((c) => c.method === 'POST')).toEqual([
      { method: 'POST', path: '/schedules/7/pause', body: {} },
    ]);
  });
});
