import { afterEach, describe, expect, it } from 'vitest';
import type { SyncStatus } from '../data/terminal-data.ts';
import { cardCharge, DECLINED_VISA, pairedTerminal, type TestTerminal } from '../data/test-support.ts';
import { createFakeDeviceServer } from './fake-device-server.ts';
import { createProcessLocks, type SyncLocks } from './sync-lock.ts';

const open: TestTerminal[] = [];
const closeLater: { close(): void }[] = [];
async function terminal(...args: Parameters<typeof pairedTerminal>) {
  const t = await pairedTerminal(...args);
  open.push(t);
  return t;
}
afterEach(() => {
  for (const t of open.splice(0)) t.data.close();
  for (const c of closeLater.splice(0)) c.close();
});

const HOUR = 3_600_000;
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const later = (t: TestTerminal, ms: number) => {
  t.clock.now = new Date(t.clock.now.getTime() + ms);
};
const donorNamed = (lastName: string) => cardCharge({ donor: { firstName: 'Test', lastName } });

describe('sync loop: answers and the outbox state machine', () => {
  it('Success → done with the receipt, Declined → declined, Error → error; retryable stays queued with the same opId', async () => {
    const t = await terminal();
    let busy = true;
    const usual = t.server.decide;
    t.server.decide = (op, secrets) => {
      const last = (op.request.donor as { lastName: string }).lastName;
      if (last === 'Error') {
        return {
          status: 'Error',
          retryable: false,
          error: { errorCode: 'GATEWAY_ERROR', message: 'Gateway said no' },
        };
      }
      if (last === 'Busy' && busy) {
        return {
          status: 'Error',
          retryable: true,
          error: { errorCode: 'TRANSACTION_IN_PROGRESS', message: 'In progress' },
        };
      }
      return usual(op, secrets);
    };
    const ok = await t.data.enqueue(donorNamed('Ok'));
    const declined = await t.data.enqueue(
      cardCharge({ card: { ccNum: DECLINED_VISA, expiry: '12/39', cvv: '123' } }),
    );
    const failed = await t.data.enqueue(donorNamed('Error'));
    const retry = await t.data.enqueue(donorNamed('Busy'));
    const schedule = await t.data.enqueue({
      kind: 'schedule',
      request: {
        ...cardCharge().request,
        amount: 40,
        scheduleDetails: {
          frequencyID: 'Monthly_Hebrew',
          startDate: '2026-03-01',
          amountPerPayment: 10,
          totalPaymentsCount: 4,
        },
      },
    });
    t.server.decide = (
      (decide) => (op, s) =>
        op.kind === 'schedule' ? { status: 'Success', retryable: false, scheduleNum: '55' } : decide(op, s)
    )(t.server.decide);

    await t.data.syncNow();
    const byId = new Map((await t.data.listOutbox()).map((i) => [i.id, i]));
    expect(byId.get(ok.id)).toMatchObject({
      state: 'done',
      receiptNum: expect.stringMatching(/^R\d+$/),
      attempts: 1,
    });
    expect(byId.get(declined.id)).toMatchObject({
      state: 'declined',
      error: { errorCode: 'CARD_DECLINED', message: 'Card declined' },
    });
    expect(byId.get(failed.id)).toMatchObject({ state: 'error', error: { errorCode: 'GATEWAY_ERROR' } });
    expect(byId.get(retry.id)).toMatchObject({
      state: 'queued',
      attempts: 1,
      error: { errorCode: 'TRANSACTION_IN_PROGRESS' },
    });
    expect(byId.get(schedule.id)).toMatchObject({
      state: 'done',
      scheduleNum: '55',
      display: { frequency: 'Monthly_Hebrew' },
    });
    expect(await t.data.summary()).toMatchObject({ pending: 1, declined: 1 });
    // The retryable one was not hammered within the run.
    expect(t.server.received.filter((op) => op.opId === retry.id)).toHaveLength(1);

    busy = false;
    await t.data.syncNow();
    expect((await t.data.waitForResult(retry.id, 0)).state).toBe('done');
    expect(t.server.received.filter((op) => op.opId === retry.id)).toHaveLength(2);
    // A final state is never left: the declined item was not sent again.
    expect(t.server.received.filter((op) => op.opId === declined.id)).toHaveLength(1);
  });

  it('pushes oldest first in batches of at most 100, reporting the queue and progress', async () => {
    const t = await terminal();
    const ids: string[] = [];
    for (let i = 0; i < 230; i++) ids.push((await t.data.enqueue(cardCharge({ amount: 1 }))).id);
    const seen: SyncStatus[] = [];
    closeLater.push({ close: t.data.onSyncStatus((s) => seen.push(s)) });
    await t.data.syncNow();
    expect(t.server.pushes.map((p) => p.operations.length)).toEqual([100, 100, 30]);
    expect(t.server.received.map((op) => op.opId)).toEqual(ids);
    expect(t.server.pushes.map((p) => p.queue)).toEqual([
      { depth: 230, totalMinor: 23_000, byKid: { [t.server.key.kid]: 230 } },
      { depth: 130, totalMinor: 13_000, byKid: { [t.server.key.kid]: 130 } },
      { depth: 30, totalMinor: 3_000, byKid: { [t.server.key.kid]: 30 } },
    ]);
    expect(t.server.pushes[0]?.appVersion).toBe('test-1.0');
    const progress = seen.filter((s) => s.phase === 'pushing').map((s) => s.progress);
    expect(progress).toContainEqual({ sent: 100, total: 230 });
    expect(progress.at(-1)).toEqual({ sent: 230, total: 230 });
    expect(seen.at(-1)).toMatchObject({
      phase: 'idle',
      progress: null,
      lastError: null,
      lastSyncAt: t.clock.now.toISOString(),
    });
    expect((await t.data.summary()).pending).toBe(0);
  });

  it('a network failure puts the batch back to queued; the next run sends the same opIds', async () => {
    const t = await terminal();
    const a = await t.data.enqueue(cardCharge());
    const b = await t.data.enqueue(cardCharge());
    t.server.faults.push.push('network');
    await t.data.syncNow();
    expect((await t.data.listOutbox()).map((i) => [i.state, i.attempts])).toEqual([
      ['queued', 1],
      ['queued', 1],
    ]);
    expect(t.data.syncStatus()).toMatchObject({
      phase: 'waiting',
      online: false,
      lastError: expect.stringMatching(/cannot be reached/),
    });
    await t.data.syncNow();
    expect(t.server.received.map((op) => op.opId)).toEqual([a.id, b.id]);
    expect((await t.data.listOutbox()).map((i) => [i.state, i.attempts])).toEqual([
      ['done', 2],
      ['done', 2],
    ]);
  });

  it('an answer lost after the server charged: the re-send gets the same answer (same opId, one charge)', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge());
    t.server.faults.push.push('answerLost');
    await t.data.syncNow();
    expect((await t.data.listOutbox())[0]?.state).toBe('queued');
    const charged = t.server.answers.get(item.id);
    await t.data.syncNow();
    expect(t.server.received.map((op) => op.opId)).toEqual([item.id, item.id]);
    expect(await t.data.waitForResult(item.id, 0)).toMatchObject({
      state: 'done',
      receiptNum: charged?.receiptNum,
    });
  });

  it('a push that times out is treated as lost', async () => {
    const t = await terminal();
    const tab = t.openTab({ pushTimeoutMs: 50 });
    closeLater.push(tab);
    await tab.enqueue(cardCharge());
    t.server.faults.push.push('timeout');
    await tab.syncNow();
    expect(tab.syncStatus().lastError).toMatch(/within 0.05 s/);
    expect((await tab.listOutbox())[0]).toMatchObject({ state: 'queued', attempts: 1 });
  });

  it('items left "sending" by a crashed run are sent again by the next run', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge());
    let hang!: () => void;
    t.server.onPush = () => new Promise<void>((r) => (hang = r));
    void t.data.syncNow();
    while (t.server.concurrency.now === 0) await sleep(5);
    expect((await t.data.listOutbox())[0]?.state).toBe('sending');
    // The tab dies mid-push; a new one (with its own lock: the old one's is gone with it) starts.
    t.server.onPush = null;
    const next = t.openTab({ locks: createProcessLocks() });
    closeLater.push(next);
    await next.syncNow();
    expect(await next.waitForResult(item.id, 0)).toMatchObject({ state: 'done', attempts: 2 });
    hang();
  });

  it('a 400 that names one operation fails that item only; the rest go through', async () => {
    const t = await terminal();
    const bad = await t.data.enqueue(cardCharge());
    const good = await t.data.enqueue(cardCharge());
    t.server.faults.push.push({
      status: 400,
      errorCode: 'VALIDATION_FAILED',
      fields: [{ field: 'operations.0.deviceCreatedDate', message: 'must be a UTC date-time' }],
    });
    await t.data.syncNow();
    expect(await t.data.waitForResult(bad.id, 0)).toMatchObject({
      state: 'error',
      error: { message: 'The server refused this item: deviceCreatedDate must be a UTC date-time' },
    });
    expect((await t.data.waitForResult(good.id, 0)).state).toBe('done');
  });

  it('new items are sealed with the key a push answer carries after a rotation', async () => {
    const t = await terminal();
    const first = await t.data.enqueue(cardCharge());
    const rotated = await t.server.rotateKey();
    await t.data.syncNow();
    expect((await t.data.getPairing())?.encryptionKey).toEqual(rotated);
    const second = await t.data.enqueue(cardCharge());
    expect([first.kid, second.kid]).toEqual([expect.not.stringMatching(rotated.kid), rotated.kid]);
    await t.data.syncNow();
    expect(t.server.opened.get(second.id)?.card?.ccNum).toBe('4242424242424242');
  });
});

describe('sync loop: expiry', () => {
  it('expiring within 12 h is counted; past expiry a never-sent item is expired and never sent', async () => {
    const t = await terminal();
    t.setOnline(false);
    const item = await t.data.enqueue(cardCharge());
    const donorSave = await t.data.enqueueDonor({ donorID: '', firstName: 'Late' });
    later(t, 59 * HOUR);
    expect((await t.data.summary()).expiringSoon).toBe(0);
    later(t, 2 * HOUR);
    expect((await t.data.summary()).expiringSoon).toBe(1);
    later(t, 12 * HOUR);
    t.setOnline(true);
    await t.data.syncNow();
    expect(await t.data.waitForResult(item.id, 0)).toMatchObject({
      state: 'expired',
      error: { errorCode: 'OFFLINE_EXPIRED' },
    });
    expect(t.server.received.map((op) => op.opId)).toEqual([donorSave.id]);
    expect(await t.data.summary()).toMatchObject({ pending: 0, expired: 1 });
    expect((await t.data.retry(item.id).catch((e: Error) => e)) as Error).toHaveProperty('code', 'INVALID');
  });

  it('an item already sent once (answer lost) is not expired on the device: the server decides', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge());
    t.server.faults.push.push('answerLost');
    await t.data.syncNow();
    later(t, 80 * HOUR);
    await t.data.syncNow();
    expect((await t.data.waitForResult(item.id, 0)).state).toBe('done');
  });
});

describe('sync loop: one run at a time', () => {
  it('two tabs on one database with a shared lock sync one at a time, and each item is sent once', async () => {
    const locks: SyncLocks = createProcessLocks();
    const t = await terminal({ locks });
    const tabB = t.openTab({ locks });
    closeLater.push(tabB);
    for (let i = 0; i < 120; i++) await (i % 2 ? tabB : t.data).enqueue(cardCharge({ amount: 2 }));
    t.server.onPush = () => sleep(20);
    await Promise.all([t.data.syncNow(), tabB.syncNow(), t.data.syncNow(), tabB.syncNow()]);
    expect(t.server.concurrency.max).toBe(1);
    expect(t.server.received).toHaveLength(120);
    expect(new Set(t.server.received.map((op) => op.opId)).size).toBe(120);
    expect((await tabB.listOutbox({ states: ['done'], limit: 500 })).length).toBe(120);
    const refs = (await t.data.listOutbox({ limit: 500 })).map((i) => i.localRef);
    expect(new Set(refs).size).toBe(120);
  });

  it('a result applied in one tab reaches the other tab waiting for it', async () => {
    const t = await terminal();
    const tabB = t.openTab();
    closeLater.push(tabB);
    const item = await t.data.enqueue(cardCharge());
    const waiting = tabB.waitForResult(item.id, 5_000);
    await t.data.syncNow();
    const started = Date.now();
    expect(await waiting).toMatchObject({ id: item.id, state: 'done' });
    expect(Date.now() - started).toBeLessThan(300);
  });

  it('waitForResult gives the current item when the time is up', async () => {
    const t = await terminal();
    const item = await t.data.enqueue(cardCharge());
    expect(await t.data.waitForResult(item.id, 30)).toMatchObject({ id: item.id, state: 'queued' });
  });
});

describe('sync loop: revoked and unknown devices', () => {
  it('revoked: phase revoked, the queue kept and shown, nothing more sent, new entries refused', async () => {
    const t = await terminal();
    await t.data.enqueue(cardCharge());
    await t.data.enqueue(cardCharge({ amount: 5 }));
    t.server.revoked = true;
    await t.data.syncNow();
    expect(t.data.syncStatus()).toMatchObject({
      phase: 'revoked',
      lastError: expect.stringMatching(/revoked/),
    });
    expect((await t.data.listOutbox()).map((i) => i.state)).toEqual(['queued', 'queued']);
    expect(await t.data.summary()).toMatchObject({ pending: 2, pendingTotals: { USD: 2300 } });
    expect(await t.data.enqueue(cardCharge()).catch((e: { code: string }) => e.code)).toBe('NOT_PAIRED');
    const pushes = t.server.pushes.length;
    // A restarted terminal knows without asking.
    const restarted = t.openTab();
    closeLater.push(restarted);
    await restarted.syncNow();
    expect(restarted.syncStatus().phase).toBe('revoked');
    expect(t.server.pushes.length).toBe(pushes);
  });

  it('401 (credential unknown): keeps the queue, says to pair again, backs off', async () => {
    const t = await terminal();
    await t.data.enqueue(cardCharge());
    t.server.faults.push.push({
      status: 401,
      errorCode: 'UNAUTHORIZED',
      message: 'The device credential is unknown',
    });
    await t.data.syncNow();
    expect(t.data.syncStatus()).toMatchObject({
      phase: 'waiting',
      lastError: expect.stringMatching(/pair the device again/),
    });
    expect((await t.data.listOutbox())[0]?.state).toBe('queued');
  });
});

describe('sync loop: triggers and back-off', () => {
  it('after failures the next attempt waits a jittered, doubling delay; a good run goes back to the interval', async () => {
    const server = await createFakeDeviceServer();
    const t = await terminal({ server });
    const tab = t.openTab({ random: () => 0.01, syncIntervalMs: 60_000 });
    closeLater.push(tab);
    const delays: number[] = [];
    const phases: string[] = [];
    let last: string | null = null;
    closeLater.push({
      close: tab.onSyncStatus((s) => {
        phases.push(s.phase);
        if (s.nextAttemptAt && s.nextAttemptAt !== last)
          delays.push(Date.parse(s.nextAttemptAt) - t.clock.now.getTime());
        last = s.nextAttemptAt;
      }),
    });
    server.faults.pull.push('network', 'network', 'network', 'network', { status: 503 });
    tab.start();
    const until = Date.now() + 5_000;
    while (Date.now() < until && !(phases.at(-1) === 'idle' && server.faults.pull.length === 0))
      await sleep(10);
    tab.stop();
    // Ceilings 1 s, 2 s, 4 s, 8 s, 16 s; the draw is 1 % of each.
    expect(delays).toEqual([10, 20, 40, 80, 160]);
    expect(tab.syncStatus()).toMatchObject({
      phase: 'idle',
      nextAttemptAt: null,
      lastError: null,
      online: true,
    });
  });

  it('start() syncs at once, and a new item is forwarded without waiting for the timer', async () => {
    const t = await terminal();
    t.data.start();
    const item = await t.data.enqueue(cardCharge());
    expect((await t.data.waitForResult(item.id, 5_000)).state).toBe('done');
    t.data.stop();
  });
});
