import type { PushRequest } from '@kupah/contracts';
import { afterEach, describe, expect, it } from 'vitest';
import { createFakeDeviceServer, type FakeDeviceServer } from '../../testing/fake-device-server.ts';
import { cardCharge, DECLINED_VISA, pairedTerminal, type TestTerminal } from '../../testing/test-support.ts';
import { CONFIRM_RECHECK_MS, isBeingConfirmed } from '../data/being-confirmed.ts';
import type { SyncStatus } from '../data/terminal-data.ts';
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

/** Polls `check` until it holds (or fails the test after `ms`). */
async function eventually(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('timed out waiting for the condition');
    await sleep(5);
  }
}

/**
 * Watches the pushes on the wire, between the terminal's fetch and the fake server: the opIds of
 * each push in the order they left (= the order they were claimed), how many were out at once,
 * any opId out in two pushes at once, and what was out or left after the first failed push.
 * Install before opening the tab that syncs (a tab takes the server's fetch when it is made).
 */
function watchPushes(server: FakeDeviceServer) {
  const inner = server.fetch;
  const out = new Map<string, number>();
  const running = new Set<number>();
  const w = {
    /** opIds of each push, in the order the pushes left. */
    pushes: [] as string[][],
    maxOut: 0,
    /** Pushes that left while an earlier one was still waiting for its answer. */
    startedWhileOthersOut: 0,
    /** Stretches of time with at least one push out (one per push when they go one by one). */
    busyStretches: 0,
    /** opIds that left in a push while out in another. */
    twiceOut: [] as string[],
    /** The first push that failed, the pushes out at that moment, and those that left after it. */
    failed: null as number | null,
    outAtFailure: [] as number[],
    startedAfterFailure: 0,
  };
  server.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    if (!String(input).endsWith('/v1/Device/Sync/Push')) return inner(input, init);
    const ops = (JSON.parse(String(init?.body)) as PushRequest).operations.map((o) => o.opId);
    const k = w.pushes.push(ops) - 1;
    if (running.size > 0) w.startedWhileOthersOut++;
    else w.busyStretches++;
    if (w.failed !== null) w.startedAfterFailure++;
    for (const id of ops) {
      if (out.has(id)) w.twiceOut.push(id);
      out.set(id, k);
    }
    running.add(k);
    w.maxOut = Math.max(w.maxOut, running.size);
    try {
      return await inner(input, init);
    } catch (err) {
      if (w.failed === null) {
        w.failed = k;
        w.outAtFailure = [...running].filter((j) => j !== k);
      }
      throw err;
    } finally {
      running.delete(k);
      for (const id of ops) if (out.get(id) === k) out.delete(id);
    }
  }) as typeof fetch;
  return w;
}

const PAYMENT_PENDING = {
  status: 'Error',
  retryable: true,
  error: { errorCode: 'PAYMENT_PENDING', message: 'The card processor has not confirmed the charge yet' },
} as const;

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
    // In progress is "being confirmed": asked about again once its pace allows, not on every run.
    later(t, CONFIRM_RECHECK_MS);
    await t.data.syncNow();
    expect((await t.data.waitForResult(retry.id, 0)).state).toBe('done');
    expect(t.server.received.filter((op) => op.opId === retry.id)).toHaveLength(2);
    // A final state is never left: the declined item was not sent again.
    expect(t.server.received.filter((op) => op.opId === declined.id)).toHaveLength(1);
  });

  it('one push at a time: oldest first in batches of at most 100, reporting the queue and progress', async () => {
    const t = await terminal();
    const tab = t.openTab({ pushesInFlight: 1 });
    closeLater.push(tab);
    const ids: string[] = [];
    for (let i = 0; i < 230; i++) ids.push((await t.data.enqueue(cardCharge({ amount: 1 }))).id);
    const seen: SyncStatus[] = [];
    closeLater.push({ close: tab.onSyncStatus((s) => seen.push(s)) });
    await tab.syncNow();
    expect(t.server.pushes.map((p) => p.operations.length)).toEqual([100, 100, 30]);
    expect(t.server.received.map((op) => op.opId)).toEqual(ids);
    // Each push reports what the device holds unanswered: this push's items and the later ones at
    // least (the one before may have left its answers still being applied).
    expect(t.server.pushes[0]?.queue).toEqual({
      depth: 230,
      totalMinor: 23_000,
      byKid: { [t.server.key.kid]: 230 },
    });
    t.server.pushes.forEach((p, k) => {
      expect(p.queue.depth).toBeGreaterThanOrEqual(230 - 100 * k);
      expect(p.queue.depth).toBeLessThanOrEqual(230 - 100 * Math.max(0, k - 1));
      expect(p.queue).toEqual({
        depth: p.queue.depth,
        totalMinor: p.queue.depth * 100,
        byKid: { [t.server.key.kid]: p.queue.depth },
      });
    });
    expect(t.server.concurrency.max).toBe(1);
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

describe('sync loop: what the device reports', () => {
  it('each run ends with a pull reporting the device’s own name and the queue left after the pushes', async () => {
    const server = await createFakeDeviceServer();
    const pulls: URL[] = [];
    const inner = server.fetch;
    server.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = new URL(String(input instanceof Request ? input.url : input));
      if (url.pathname.endsWith('/Sync/Pull')) pulls.push(url);
      return inner(input, init);
    }) as typeof fetch;
    const t = await terminal({ server });
    await t.data.saveLocalSettings({ deviceName: 'Front desk' });
    await t.data.enqueue(cardCharge({ amount: 10 }));
    await t.data.enqueue(cardCharge({ amount: 20 }));
    pulls.length = 0;
    await t.data.syncNow();
    expect(server.pushes.length).toBeGreaterThan(0);
    const first = pulls[0]!;
    expect(first.searchParams.get('deviceName')).toBe('Front desk');
    // Both were answered by the push: nothing is left, whatever the push reported before.
    expect(first.searchParams.get('queueDepth')).toBe('0');
    expect(first.searchParams.get('queueTotalMinor')).toBe('0');
    // One more page of a long pull carries no report again.
    for (const later of pulls.slice(1)) expect(later.searchParams.has('queueDepth')).toBe(false);
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
    // One push at a time within a run, so that two pushes at once could only be two runs at once.
    const tabA = t.openTab({ locks, pushesInFlight: 1 });
    const tabB = t.openTab({ locks, pushesInFlight: 1 });
    closeLater.push(tabA, tabB);
    for (let i = 0; i < 120; i++) await (i % 2 ? tabB : tabA).enqueue(cardCharge({ amount: 2 }));
    t.server.onPush = () => sleep(20);
    await Promise.all([tabA.syncNow(), tabB.syncNow(), tabA.syncNow(), tabB.syncNow()]);
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
  it('server errors back off (jittered, doubling); an unreachable server is probed every ~2 s; a good run goes back to the interval', async () => {
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
    server.faults.pull.push({ status: 503 }, { status: 503 }, { status: 503 }, 'network', 'network', {
      status: 503,
    });
    tab.start();
    const until = Date.now() + 5_000;
    while (Date.now() < until && !(phases.at(-1) === 'idle' && server.faults.pull.length === 0))
      await sleep(10);
    tab.stop();
    // Server errors: ceilings 1 s, 2 s, 4 s (the draw is 1 % of each); unreachable: 2 s × (0.75 +
    // 0.5 × 0.01) each time, however many failures came before; the next server error goes on
    // doubling from where the server errors were (8 s).
    expect(delays).toEqual([10, 20, 40, 1510, 1510, 80]);
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

describe('sync loop: pipelined pushes', () => {
  async function backlog(t: TestTerminal, n: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await t.data.enqueue(cardCharge({ amount: 1 }))).id);
    return ids;
  }

  it('up to 3 pushes out at once, overlapping; oldest first; no item in two pushes at once', async () => {
    const t = await terminal();
    const watch = watchPushes(t.server);
    const tab = t.openTab({ pushBatchSize: 10 });
    closeLater.push(tab);
    const ids = await backlog(t, 100);
    const seen: SyncStatus[] = [];
    closeLater.push({ close: tab.onSyncStatus((s) => seen.push(s)) });
    // The gateway's pace: every push takes a while to answer.
    t.server.onPush = () => sleep(100);
    await tab.syncNow();

    // 10 batches, never more than 3 out, and 3 out at once.
    expect(watch.pushes.map((p) => p.length)).toEqual(Array(10).fill(10));
    expect(t.server.concurrency.max).toBe(3);
    expect(watch.maxOut).toBe(3);
    // They overlapped: the 10 pushes took at most ceil(10 / 3) = 4 stretches of waiting (one by
    // one they would take 10), at least 2 of every 3 leaving while another was out.
    expect(watch.busyStretches).toBeLessThanOrEqual(4);
    expect(watch.startedWhileOthersOut).toBeGreaterThanOrEqual(6);
    // Claimed oldest first, each item once; none ever out in two pushes at once.
    expect(watch.pushes.flat()).toEqual(ids);
    expect(watch.twiceOut).toEqual([]);
    expect(t.server.received).toHaveLength(100);
    expect(new Set(t.server.received.map((op) => op.opId)).size).toBe(100);
    // Each push reports what the device still holds: at least its own items and the later ones.
    for (const p of t.server.pushes) {
      const k = watch.pushes.findIndex((ops) => ops[0] === p.operations[0]?.opId);
      expect(p.queue.depth).toBeLessThanOrEqual(100);
      expect(p.queue.depth).toBeGreaterThanOrEqual(100 - 10 * k);
    }
    expect(seen.filter((s) => s.phase === 'pushing').at(-1)?.progress).toEqual({ sent: 100, total: 100 });
    const items = await tab.listOutbox({ limit: 500 });
    expect(items.filter((i) => i.state !== 'done')).toEqual([]);
    expect(items.every((i) => i.attempts === 1 && /^R\d+$/.test(i.receiptNum ?? ''))).toBe(true);
    expect(tab.syncStatus()).toMatchObject({ phase: 'idle', lastError: null });
  });

  it('a push refused with 429 (one token per operation) is halved for the next runs until it fits the burst', async () => {
    const t = await terminal();
    // The organisation's burst is 3 operations: a push of more is refused whole.
    const inner = t.server.fetch;
    t.server.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
      if (String(input).endsWith('/v1/Device/Sync/Push')) {
        const n = (JSON.parse(String(init?.body)) as PushRequest).operations.length;
        if (n > 3) t.server.faults.push.unshift({ status: 429, errorCode: 'RATE_LIMITED', retryAfter: '1' });
      }
      return inner(input, init);
    }) as typeof fetch;
    const watch = watchPushes(t.server);
    const tab = t.openTab({ pushBatchSize: 8 });
    closeLater.push(tab);
    await backlog(t, 8);
    for (
      let run = 0;
      run < 6 && (await tab.listOutbox({ limit: 50 })).some((i) => i.state !== 'done');
      run++
    ) {
      await tab.syncNow().catch(() => undefined);
    }
    const sizes = watch.pushes.map((p) => p.length);
    // 8 → 4 → 2 (pushes of one run leave together, so a size may be seen twice): the refused
    // pushes shrank until they fit; everything went, each item once.
    expect(sizes[0]).toBe(8);
    expect(sizes).toEqual([...sizes].sort((a, b) => b - a));
    expect(sizes.at(-1)).toBeLessThanOrEqual(3);
    expect(sizes.filter((n) => n <= 3).reduce((a, b) => a + b, 0)).toBe(8);
    expect(t.server.received).toHaveLength(8);
    expect((await tab.listOutbox({ limit: 50 })).every((i) => i.state === 'done')).toBe(true);
  });

  it('a failure mid-pipeline stops the claiming; the pushes in flight finish and are applied; nothing is lost', async () => {
    const t = await terminal();
    const watch = watchPushes(t.server);
    const tab = t.openTab({ pushBatchSize: 10 });
    closeLater.push(tab);
    const ids = await backlog(t, 100);
    let n = 0;
    t.server.onPush = async () => {
      const mine = ++n;
      await sleep(60);
      // The second push's connection drops before the server does anything with it.
      if (mine === 2) throw new TypeError('connection reset');
    };
    await tab.syncNow();

    expect(tab.syncStatus()).toMatchObject({
      phase: 'waiting',
      online: false,
      lastError: expect.stringMatching(/cannot be reached/),
    });
    // Claiming stopped: only a batch already being claimed when the failure came left after it.
    expect(watch.failed).not.toBeNull();
    expect(watch.startedAfterFailure).toBeLessThanOrEqual(1);
    expect(watch.pushes.length).toBeLessThan(10);
    expect(watch.twiceOut).toEqual([]);

    const items = await tab.listOutbox({ limit: 500 });
    const byId = new Map(items.map((i) => [i.id, i]));
    expect(items).toHaveLength(100);
    // Nothing left half-way: every item answered (done) or back in the queue.
    expect(items.filter((i) => i.state !== 'done' && i.state !== 'queued')).toEqual([]);
    // What the server answered is on the device, receipt for receipt.
    const done = items.filter((i) => i.state === 'done');
    expect(done.map((i) => i.id).sort()).toEqual([...t.server.answers.keys()].sort());
    for (const i of done) expect(i.receiptNum).toBe(t.server.answers.get(i.id)?.receiptNum);
    // The pushes that were out when the failure came finished, and their answers were applied.
    expect(watch.outAtFailure.length).toBeGreaterThan(0);
    for (const k of watch.outAtFailure) {
      for (const id of watch.pushes[k]!) expect(byId.get(id)?.state).toBe('done');
    }
    // The failed push's items wait to be sent again (one attempt spent); the rest were never sent.
    const failedOps = new Set(watch.pushes[watch.failed!]);
    const sentOps = new Set(watch.pushes.flat());
    for (const id of ids) {
      const item = byId.get(id)!;
      if (failedOps.has(id)) expect(item).toMatchObject({ state: 'queued', attempts: 1 });
      else if (!sentOps.has(id)) expect(item).toMatchObject({ state: 'queued', attempts: 0 });
    }

    // The next run sends the rest: every item done, each processed by the server once.
    t.server.onPush = null;
    await tab.syncNow();
    expect((await tab.listOutbox({ limit: 500 })).filter((i) => i.state !== 'done')).toEqual([]);
    expect(t.server.received).toHaveLength(100);
    expect(new Set(t.server.received.map((op) => op.opId)).size).toBe(100);
    expect(watch.twiceOut).toEqual([]);
  });

  it('an answer lost mid-pipeline: the others are applied; the re-send gets the same receipts', async () => {
    const t = await terminal();
    const watch = watchPushes(t.server);
    const tab = t.openTab({ pushBatchSize: 10 });
    closeLater.push(tab);
    await backlog(t, 40);
    t.server.onPush = () => sleep(40);
    t.server.faults.push.push('answerLost');
    await tab.syncNow();
    const lost = watch.pushes[watch.failed!]!;
    const first = await tab.listOutbox({ limit: 500 });
    expect(first.filter((i) => lost.includes(i.id)).map((i) => i.state)).toEqual(Array(10).fill('queued'));
    expect(first.filter((i) => i.state === 'sending')).toEqual([]);
    await tab.syncNow();
    const items = await tab.listOutbox({ limit: 500 });
    expect(items.filter((i) => i.state !== 'done')).toEqual([]);
    for (const i of items) expect(i.receiptNum).toBe(t.server.answers.get(i.id)?.receiptNum);
    expect(t.server.answers.size).toBe(40);
  });

  it('revoked mid-pipeline: answers already given are kept, the rest stays queued, nothing more is sent', async () => {
    const t = await terminal();
    const watch = watchPushes(t.server);
    const tab = t.openTab({ pushBatchSize: 10 });
    closeLater.push(tab);
    await backlog(t, 60);
    let n = 0;
    t.server.onPush = async () => {
      if (++n === 2) t.server.revoked = true;
      await sleep(40);
    };
    await tab.syncNow();
    expect(tab.syncStatus()).toMatchObject({ phase: 'revoked', lastError: expect.stringMatching(/revoked/) });
    expect(watch.startedAfterFailure).toBeLessThanOrEqual(1);
    const items = await tab.listOutbox({ limit: 500 });
    const done = items.filter((i) => i.state === 'done');
    // The two pushes let in before the revocation were answered and applied.
    expect(done.map((i) => i.id).sort()).toEqual([...watch.pushes[0]!, ...watch.pushes[1]!].sort());
    expect(items.filter((i) => i.state !== 'done' && i.state !== 'queued')).toEqual([]);
    const pushes = watch.pushes.length;
    await tab.syncNow();
    expect(watch.pushes.length).toBe(pushes);
  });
});

describe('sync loop: payments being confirmed', () => {
  it('PAYMENT_PENDING: kept as being confirmed (not declined, not failed), not holding the queue back, asked again after 30 s, then done with its receipt', async () => {
    const t = await terminal();
    let pending = true;
    let slowId = '';
    const usual = t.server.decide;
    t.server.decide = (op, s) => (op.opId === slowId && pending ? PAYMENT_PENDING : usual(op, s));
    const slow = await t.data.enqueue(donorNamed('Slow'));
    slowId = slow.id;
    const other = await t.data.enqueue(cardCharge({ amount: 5 }));
    const asked = () => t.server.received.filter((op) => op.opId === slow.id).length;

    await t.data.syncNow();
    const started = Date.now();
    // The wait for a result ends as soon as the server has said "being confirmed".
    const first = await t.data.waitForResult(slow.id, 5_000);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(first).toMatchObject({
      state: 'queued',
      attempts: 1,
      receiptNum: null,
      error: { errorCode: 'PAYMENT_PENDING' },
    });
    expect(isBeingConfirmed(first)).toBe(true);
    expect((await t.data.waitForResult(other.id, 0)).state).toBe('done');
    expect(await t.data.summary()).toMatchObject({
      pending: 1,
      pendingTotals: { USD: 1800 },
      confirming: 1,
      confirmingTotals: { USD: 1800 },
      declined: 0,
      expiringSoon: 0,
    });
    // Not a failure and not a busy server: the run was good, the terminal is online.
    expect(t.data.syncStatus()).toMatchObject({
      phase: 'idle',
      online: true,
      lastError: null,
      nextAttemptAt: null,
    });
    // It may have been charged: it cannot be discarded.
    expect(await t.data.discard(slow.id, 'gone').catch((e: Error) => e.message)).toMatch(/being confirmed/);

    // A new donation goes through at once; the pending one is not asked about again yet.
    const next = await t.data.enqueue(cardCharge({ amount: 7 }));
    await t.data.syncNow();
    expect((await t.data.waitForResult(next.id, 0)).state).toBe('done');
    expect(asked()).toBe(1);

    // 30 s later it is asked again, with the same opId: still pending.
    later(t, CONFIRM_RECHECK_MS);
    await t.data.syncNow();
    expect(asked()).toBe(2);
    expect(await t.data.waitForResult(slow.id, 0)).toMatchObject({
      state: 'queued',
      attempts: 2,
      error: { errorCode: 'PAYMENT_PENDING' },
    });

    // The server has found out from the gateway: the next answer is Success with a receipt.
    pending = false;
    later(t, CONFIRM_RECHECK_MS);
    await t.data.syncNow();
    expect(asked()).toBe(3);
    const settled = await t.data.waitForResult(slow.id, 0);
    expect(settled).toMatchObject({ state: 'done', attempts: 3, error: null });
    expect(settled.receiptNum).toMatch(/^R\d+$/);
    expect(settled.receiptNum).toBe(t.server.answers.get(slow.id)?.receiptNum);
    expect(await t.data.summary()).toMatchObject({
      pending: 0,
      confirming: 0,
      confirmingTotals: {},
      declined: 0,
    });
  });

  it('PAYMENT_PENDING, then Declined: counted as declined only once the outcome is known', async () => {
    const t = await terminal();
    const answers: ('pending' | 'busy' | 'declined')[] = ['pending', 'busy', 'declined'];
    let slowId = '';
    const usual = t.server.decide;
    t.server.decide = (op, s) => {
      if (op.opId !== slowId) return usual(op, s);
      const next = answers.shift();
      if (next === 'pending') return PAYMENT_PENDING;
      if (next === 'busy')
        return {
          status: 'Error',
          retryable: true,
          error: { errorCode: 'INTERNAL_ERROR', message: 'Try again' },
        };
      return {
        status: 'Declined',
        retryable: false,
        error: { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' },
      };
    };
    slowId = (await t.data.enqueue(donorNamed('Slow'))).id;
    await t.data.syncNow();
    expect(await t.data.summary()).toMatchObject({ confirming: 1, declined: 0 });
    expect(await t.data.listOutbox({ states: ['declined', 'error'] })).toEqual([]);

    // A "try again" of another kind meanwhile does not make it a plain waiting item: it may be charged.
    later(t, CONFIRM_RECHECK_MS);
    await t.data.syncNow();
    const between = await t.data.waitForResult(slowId, 0);
    expect(between).toMatchObject({ state: 'queued', attempts: 2, error: { errorCode: 'PAYMENT_PENDING' } });
    expect(between.result?.error?.errorCode).toBe('INTERNAL_ERROR');

    later(t, CONFIRM_RECHECK_MS);
    await t.data.syncNow();
    expect(await t.data.waitForResult(slowId, 0)).toMatchObject({
      state: 'declined',
      attempts: 3,
      error: { errorCode: 'CARD_DECLINED', message: 'Insufficient funds' },
    });
    expect(await t.data.summary()).toMatchObject({ pending: 0, confirming: 0, declined: 1 });
  });

  it('REQUEST_IN_PROGRESS: asked again at its own pace (not the long back-off) while new items go at once', async () => {
    const t = await terminal();
    let inProgress = true;
    let heldId = '';
    const usual = t.server.decide;
    t.server.decide = (op, s) =>
      op.opId === heldId && inProgress
        ? {
            status: 'Error',
            retryable: true,
            error: { errorCode: 'REQUEST_IN_PROGRESS', message: 'Being processed for another request' },
          }
        : usual(op, s);
    // A real clock, a short pace and a long interval: only the pace can bring the second ask.
    const tab = t.openTab({ now: () => new Date(), confirmRecheckMs: 100, syncIntervalMs: 60_000 });
    closeLater.push(tab);
    const held = await tab.enqueue(cardCharge());
    heldId = held.id;
    const asked = () => t.server.received.filter((op) => op.opId === held.id).length;
    tab.start();
    await eventually(() => asked() >= 1);
    await eventually(async () => isBeingConfirmed(await tab.waitForResult(held.id, 0)));
    await eventually(() => tab.syncStatus().phase === 'idle');
    // A good run, not a busy server: no back-off.
    expect(tab.syncStatus()).toMatchObject({ nextAttemptAt: null, lastError: null, online: true });
    // Not backing off: a new donation is forwarded at once.
    const fresh = await tab.enqueue(cardCharge({ amount: 3 }));
    expect((await tab.waitForResult(fresh.id, 3_000)).state).toBe('done');
    // Asked again within its pace, long before the 60 s interval.
    await eventually(() => asked() >= 2, 3_000);
    inProgress = false;
    await eventually(async () => (await tab.waitForResult(held.id, 0)).state === 'done', 3_000);
    tab.stop();
  });
});
