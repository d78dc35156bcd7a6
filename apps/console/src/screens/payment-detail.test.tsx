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

  it('refunds part in exact minor units under one id per dialog: a retry reuses it, a gateway refusal is shown and the next try is a new refund', async () => {
    const answers = [
      { status: 503, body: { error: { errorCode: 'GATEWAY_UNAVAILABLE', message: 'try again' } } },
      {
        status: 200,
        body: {
          receiptNum: '1001',
          paymentStatus: 'Success',
          refundId: 1,
          refundStatus: 'Failed',
          refundAmount: 19.99,
          refundedAmount: 0,
          remainingAmount: 180,
          currency: 'USD',
          error: { errorCode: 'DECLINED', message: 'Refund declined by the gateway' },
        },
      },
    ];
    const { calls } = renderAs(
      'manager',
      <PaymentView p={PAYMENT} reload={() => {}} />,
      () => answers.shift()!,
    );
    fireEvent.click(screen.getByTestId('refund-button'));
    const dialog = await screen.findByTestId('refund-dialog');
    const [amount, reason] = [...dialog.querySelectorAll('input')];
    expect(amount!.value).toBe('180.00');
    fireEvent.change(amount!, { target: { value: '19.99' } });
    fireEvent.change(reason!, { target: { value: 'asked by donor' } });
    fireEvent.submit(dialog.querySelector('form')!);
    await screen.findByRole('alert');
    fireEvent.submit(dialog.querySelector('form')!);
    await waitFor(() =>
      expect(screen.getByRole('alert').textContent).toContain('Refund declined by the gateway'),
    );
    fireEvent.submit(dialog.querySelector('form')!);
    await waitFor(() => expect(calls).toHaveLength(3));
    const bodies = calls.map(
      (c) => c.body as { amountMinor: number; reason: string; uniqueTransactionId: string },
    );
    expect(bodies.map((b) => [b.amountMinor, b.reason])).toEqual([
      [1999, 'asked by donor'],
      [1999, 'asked by donor'],
      [1999, 'asked by donor'],
    ]);
    // The retry after a 503 is the same refund; after the gateway's refusal, a new one.
    expect(bodies[1]!.uniqueTransactionId).toBe(bodies[0]!.uniqueTransactionId);
    expect(bodies[2]!.uniqueTransactionId).not.toBe(bodies[1]!.uniqueTransactionId);
    expect(calls[0]!.path).toBe('/payments/1001/refund');
    // The dialog stays open with what was typed.
    expect(screen.getByTestId('refund-dialog')).toBeTruthy();
  });

  it('says plainly when the server cannot refund (501)', async () => {
    renderAs('manager', <PaymentView p={PAYMENT} reload={() => {}} />, () => ({
      status: 501,
      body: { error: { errorCode: 'NOT_IMPLEMENTED', message: 'Refunds are not available yet' } },
    }));
    fireEvent.click(screen.getByTestId('refund-button'));
    const dialog = await screen.findByTestId('refund-dialog');
    fireEvent.change(dialog.querySelectorAll('input')[1]!, { target: { value: 'asked by donor' } });
    fireEvent.submit(dialog.querySelector('form')!);
    expect((await screen.findByRole('alert')).textContent).toBe('This is not available on this server yet.');
  });

  it('offers the rest of a partly refunded payment, never a void, and lists its refunds', async () => {
    const refund = {
      refundId: 1,
      status: 'succeeded' as const,
      amount: 50,
      amountMinor: 5000,
      reason: 'asked by donor',
      actor: 'manager@example.org',
      gatewayRefNum: 'SBX-R1',
      errorCode: null,
      errorMessage: null,
      createdAt: '2026-11-26T15:00:00Z',
      resolvedAt: '2026-11-26T15:00:01Z',
    };
    const partly = {
      ...PAYMENT,
      status: 'PartiallyRefunded' as const,
      refunds: [refund],
      refundedAmount: 50,
      refundedMinor: 5000,
    };
    renderAs('manager', <PaymentView p={partly} reload={() => {}} />);
    expect(screen.queryByTestId('void-button')).toBeNull();
    expect(screen.getByTestId('refunded-total').textContent).toBe('Refunded so far: $50.00');
    expect(screen.getByText('asked by donor')).toBeTruthy();
    fireEvent.click(screen.getByTestId('refund-button'));
    const dialog = await screen.findByTestId('refund-dialog');
    expect(dialog.querySelector('input')!.value).toBe('130.00');
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
