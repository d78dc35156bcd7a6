/**
 * A discarded donation leaves a trace on the device: the row stays, with why, when and how the
 * discard was authorised (the queue asks for the manager PIN first and shows the record).
 */
import { describe, expect, it } from 'vitest';
import { cardCharge, pairedTerminal } from '../../testing/test-support.ts';
import type { DiscardRecord } from './outbox-repo.ts';
import type { OutboxItem } from './terminal-data.ts';

describe('discarding a queued donation', () => {
  it('keeps the item with its reason, time and authorisation', async () => {
    const t = await pairedTerminal();
    try {
      t.setOnline(false);
      const item = await t.data.enqueue(cardCharge({ amount: 36 }));
      const before = Date.now();
      await t.data.discard(item.id, 'donor changed mind');
      const [kept] = (await t.data.listOutbox({ states: ['discarded'] })) as (OutboxItem & DiscardRecord)[];
      expect(kept).toMatchObject({
        id: item.id,
        state: 'discarded',
        amountMinor: 3600,
        discardReason: 'donor changed mind',
        discardedBy: 'manager-pin',
      });
      expect(Date.parse(kept!.discardedAt)).toBeGreaterThanOrEqual(before - 1000);
      // Nothing to send any more, but nothing erased either.
      expect((await t.data.summary()).pending).toBe(0);
      expect(await t.dumpDatabase()).toContain('donor changed mind');
    } finally {
      t.data.close();
    }
  });
});
