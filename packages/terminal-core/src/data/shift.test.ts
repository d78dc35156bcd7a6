import { afterEach, describe, expect, it } from 'vitest';
import { cardCharge, DECLINED_VISA, pairedTerminal, type TestTerminal } from '../../testing/test-support.ts';

const open: TestTerminal[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.data.close();
});

describe('end of shift', () => {
  it('counts a schedule only when its first payment was charged (a schedule starting later took nothing)', async () => {
    const t = await pairedTerminal();
    open.push(t);
    t.clock.now = new Date(t.clock.now.getTime() + 60_000);
    const schedule = (startDate: string) => ({
      kind: 'schedule' as const,
      request: {
        ...cardCharge().request,
        amount: 40,
        scheduleDetails: {
          frequencyID: 'Monthly_Hebrew' as const,
          startDate,
          amountPerPayment: 10,
          totalPaymentsCount: 4,
        },
      },
    });
    const now = await t.data.enqueue(schedule('2026-03-01'));
    const later = await t.data.enqueue(schedule('2026-04-01'));
    t.server.decide = (
      (decide) => (op, s) =>
        op.kind === 'schedule'
          ? {
              status: 'Success',
              retryable: false,
              scheduleNum: '7',
              // The server charges the first payment only of the schedule that starts today.
              receiptNum: op.opId === now.id ? 'R900001' : null,
            }
          : decide(op, s)
    )(t.server.decide);
    await t.data.syncNow();
    const items = new Map((await t.data.listOutbox()).map((i) => [i.id, i]));
    expect(items.get(later.id)).toMatchObject({ state: 'done', receiptNum: null });
    t.clock.now = new Date(t.clock.now.getTime() + 1_000);
    expect((await t.data.shiftSummary()).totals.succeeded).toEqual([
      { method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 1000 },
    ]);
  });

  it('sums what the device took since the last close by method and currency; the close is kept and reported to the server', async () => {
    const t = await pairedTerminal();
    open.push(t);
    const later = (ms: number) => {
      t.clock.now = new Date(t.clock.now.getTime() + ms);
    };
    later(60_000);
    const usd = await t.data.enqueue(cardCharge({ amount: 18 }));
    later(1_000);
    await t.data.enqueue(cardCharge({ amount: 36, currency: 'ILS' }));
    later(1_000);
    await t.data.enqueue(
      cardCharge({ amount: 5, card: { ccNum: DECLINED_VISA, expiry: '12/39', cvv: '123' } }),
    );
    await t.data.syncNow();
    const receipt = (await t.data.waitForResult(usd.id, 0)).receiptNum!;
    later(1_000);
    await t.data.enqueueVoid(receipt, 'entered twice');
    await t.data.syncNow();
    t.setOnline(false);
    later(1_000);
    await t.data.enqueue(cardCharge({ amount: 7 }));
    later(1_000);

    const summary = await t.data.shiftSummary();
    expect(summary.totals).toEqual({
      succeeded: [{ method: 'Credit_Card', currency: 'ILS', count: 1, amountMinor: 3600 }],
      voided: [{ method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 1800 }],
      declined: [{ method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 500 }],
      queued: [{ method: 'Credit_Card', currency: 'USD', count: 1, amountMinor: 700 }],
    });

    // Closed offline: kept on the device, reported when the server answers.
    const close = await t.data.closeShift('Rivka');
    expect(close).toMatchObject({ closedBy: 'Rivka', reportedAt: null, totals: summary.totals });
    expect((await t.data.shiftSummary()).totals.succeeded).toEqual([]);
    t.setOnline(true);
    await t.data.syncNow();
    expect(t.server.shiftCloses).toHaveLength(1);
    expect(t.server.shiftCloses[0]).toMatchObject({
      closeId: close.closeId,
      closedBy: 'Rivka',
      closedAt: close.at,
    });
    const [recorded] = await t.data.listShiftCloses();
    expect(recorded!.reportedAt).not.toBeNull();
    expect(recorded!.server?.succeeded).toEqual(summary.totals.succeeded);
    // Reported once: the next run sends nothing again.
    await t.data.syncNow();
    expect(t.server.shiftCloses).toHaveLength(1);
  });
});
