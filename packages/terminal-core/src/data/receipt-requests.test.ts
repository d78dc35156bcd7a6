import { afterEach, describe, expect, it } from 'vitest';
import { cardCharge, DECLINED_VISA, pairedTerminal, type TestTerminal } from '../../testing/test-support.ts';
import { OutboxRefusal } from './terminal-data.ts';

const open: TestTerminal[] = [];
afterEach(() => {
  for (const t of open.splice(0)) t.data.close();
});

async function terminal(): Promise<TestTerminal> {
  const t = await pairedTerminal();
  open.push(t);
  return t;
}

describe('receipts the donor asks for by e-mail', () => {
  it('offline: the address waits with the donation and travels in its push; nothing is sent twice', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(cardCharge({ amount: 18 }));
    const asked = await t.data.requestReceipt!(item.id, '  Donor@Example.com ', 'he');
    expect(asked.receipt).toMatchObject({ email: 'Donor@Example.com', language: 'he', state: 'pending' });
    expect(t.server.received).toEqual([]);

    t.setOnline(true);
    await t.data.syncNow();
    const op = t.server.received.find((o) => o.opId === item.id);
    expect(op).toMatchObject({ receiptEmail: 'Donor@Example.com', receiptLanguage: 'he' });
    const done = await t.data.waitForResult(item.id, 0);
    expect(done.state).toBe('done');
    expect(done.receipt?.state).toBe('sent');
    // The server has it with the payment: no separate request, now or on later runs.
    await t.data.syncNow();
    expect(t.server.receiptSends).toEqual([]);
  });

  it('after the payment was forwarded: sent on its own with the receipt number, again after a failed try', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge({ amount: 36 }));
    await t.data.syncNow();
    const done = await t.data.waitForResult(item.id, 0);
    expect(done.receiptNum).toMatch(/^R/);

    // The first try gets no answer (the run that requestReceipt starts, or this one): a later run sends it.
    t.server.faults.receipt.push('network');
    await t.data.requestReceipt!(item.id, 'donor@example.com', 'en');
    await t.data.syncNow().catch(() => undefined);
    await t.data.syncNow();
    expect(t.server.faults.receipt).toEqual([]);
    expect(t.server.receiptSends).toEqual([
      { receiptNum: done.receiptNum, email: 'donor@example.com', language: 'en' },
    ]);
    expect((await t.data.waitForResult(item.id, 0)).receipt?.state).toBe('sent');
    await t.data.syncNow();
    expect(t.server.receiptSends).toHaveLength(1);
  });

  it("the server's refusal is final and kept with the item; a new address is sent", async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge({ amount: 5 }));
    await t.data.syncNow();
    t.server.faults.receipt.push({
      status: 400,
      errorCode: 'RECEIPTS_DISABLED',
      message: 'Receipts are off',
    });
    await t.data.requestReceipt!(item.id, 'donor@example.com', 'en');
    await t.data.syncNow();
    expect((await t.data.waitForResult(item.id, 0)).receipt).toMatchObject({
      state: 'failed',
      error: 'RECEIPTS_DISABLED',
    });
    await t.data.syncNow();
    expect(t.server.receiptSends).toEqual([]);
    await t.data.requestReceipt!(item.id, 'other@example.com', 'en');
    await t.data.syncNow();
    expect(t.server.receiptSends.map((r) => r.email)).toEqual(['other@example.com']);
  });

  it('refuses an address that is not one, and a donation that took no money', async () => {
    const t = await terminal();
    const declined = await t.data.enqueue(
      cardCharge({ card: { ccNum: DECLINED_VISA, expiry: '12/39', cvv: '123' } }),
    );
    await t.data.syncNow();
    expect((await t.data.waitForResult(declined.id, 0)).state).toBe('declined');
    await expect(t.data.requestReceipt!(declined.id, 'donor@example.com', 'en')).rejects.toThrow(
      OutboxRefusal,
    );
    const ok = await t.data.enqueue(cardCharge());
    await expect(t.data.requestReceipt!(ok.id, 'not an address', 'en')).rejects.toThrow(OutboxRefusal);
    expect((await t.data.waitForResult(ok.id, 0)).receipt ?? null).toBeNull();
  });

  it('a donation that is declined after the donor asked: the receipt is marked failed, never sent', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(
      cardCharge({ card: { ccNum: DECLINED_VISA, expiry: '12/39', cvv: '123' } }),
    );
    await t.data.requestReceipt!(item.id, 'donor@example.com', 'en');
    t.setOnline(true);
    await t.data.syncNow();
    const after = await t.data.waitForResult(item.id, 0);
    expect(after.state).toBe('declined');
    expect(after.receipt?.state).toBe('failed');
    expect(t.server.receiptSends).toEqual([]);
  });
});
