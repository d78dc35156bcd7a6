import { cleanup, fireEvent, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PAYMENT, renderAs } from '../../test/render.tsx';
import { applyLanguage } from '../i18n/index.ts';
import { PaymentView } from './payment-detail.tsx';

describe('the payment screen by role', () => {
  beforeEach(() => applyLanguage('en'));
  afterEach(cleanup);

  it('shows a viewer no void and no refund button', () => {
    renderAs('viewer', <PaymentView p={PAYMENT} reload={() => {}} />);
    expect(screen.getByTestId('payment-amount').textContent).toBe('$180.00');
    expect(screen.queryByTestId('void-button')).toBeNull();
    expect(screen.queryByTestId('refund-button')).toBeNull();
    expect(screen.queryByRole('button', { name: /void|refund/i })).toBeNull();
  });

  it('shows a manager both, and voids with a reason after confirming', async () => {
    let reloaded = 0;
    const { calls } = renderAs('manager', <PaymentView p={PAYMENT} reload={() => reloaded++} />, () => ({
      status: 200,
      body: { status: 'Voided' },
    }));
    expect(screen.getByTestId('refund-button')).toBeTruthy();
    fireEvent.click(screen.getByTestId('void-button'));
    const dialog = await screen.findByTestId('void-dialog');
    fireEvent.change(dialog.querySelector('input')!, { target: { value: 'duplicate' } });
    fireEvent.submit(dialog.querySelector('form')!);
    await waitFor(() => expect(reloaded).toBe(1));
    expect(calls).toEqual([{ method: 'POST', path: '/payments/1001/void', body: { reason: 'duplicate' } }]);
  });

  it('does not offer a voided payment for void or refund', () => {
    renderAs(
      'owner',
      <PaymentView p={{ ...PAYMENT, status: 'Voided', voidedAt: PAYMENT.createdAt }} reload={() => {}} />,
    );
    expect(screen.queryByTestId('void-button')).toBeNull();
    expect(screen.queryByTestId('refund-button')).toBeNull();
  });

  it('refunds part in exact minor units, and says so plainly when the server has no refunds yet (501)', async () => {
    const { calls } = renderAs('manager', <PaymentView p={PAYMENT} reload={() => {}} />, () => ({
      status: 501,
      body: { error: { errorCode: 'NOT_IMPLEMENTED', message: 'Refunds are not available yet' } },
    }));
    fireEvent.click(screen.getByTestId('refund-button'));
    const dialog = await screen.findByTestId('refund-dialog');
    const [amount, reason] = [...dialog.querySelectorAll('input')];
    expect(amount!.value).toBe('180.00');
    fireEvent.change(amount!, { target: { value: '19.99' } });
    fireEvent.change(reason!, { target: { value: 'asked by donor' } });
    fireEvent.submit(dialog.querySelector('form')!);
    expect(await screen.findByRole('alert')).toHaveProperty(
      'textContent',
      'This is not available on this server yet.',
    );
    expect(calls).toEqual([
      {
        method: 'POST',
        path: '/payments/1001/refund',
        body: { amountMinor: 1999, reason: 'asked by donor' },
      },
    ]);
    // The dialog stays open with what was typed.
    expect(screen.getByTestId('refund-dialog')).toBeTruthy();
  });

  it('refuses a refund above what is left', async () => {
    renderAs('manager', <PaymentView p={PAYMENT} reload={() => {}} />);
    fireEvent.click(screen.getByTestId('refund-button'));
    const dialog = await screen.findByTestId('refund-dialog');
    fireEvent.change(dialog.querySelector('input')!, { target: { value: '180.01' } });
    expect(dialog.textContent).toContain('The amount is too large.');
    const submit = dialog.querySelector('button[type="submit"]') as HTMLButtonElement;
    expect(submit.disabled).toBe(true);
  });
});
