/**
 * The sync loop: forwards the outbox and refreshes the reference data. One run = expire what
 * may no longer be charged, push the queue oldest first in batches (each item marked `sending`
 * durably before it leaves, each batch's answers applied in one transaction), then pull until
 * the server has nothing more. Runs are started by `syncNow()`, by the browser's `online` event,
 * by a new item (`nudge`), by the page becoming visible again, and by a timer: every 30 s after a
 * good run; after a run that could not reach the server at all (refused, no route, DNS), a probe
 * every 2 s or so (jittered), so forwarding starts within seconds of the server answering again;
 * after a server error (5xx, 429, a time-out), an exponential back-off with full jitter.
 *
 * The pushes are pipelined: the server works on the operations of a push concurrently and the
 * gateway takes its time per charge, so up to `maxPushesInFlight` (3) pushes are out at once —
 * the next batch is claimed and sent while earlier ones wait for their answers. Batches are
 * claimed one after another, oldest first, and an item claimed in a run is never claimed again in
 * it (no item is in two pushes at once). A failed push stops the claiming; the pushes in flight
 * finish and their answers are applied; then the run fails as a whole (back-off as before).
 *
 * Items whose answer was "outcome not known yet" (PAYMENT_PENDING, in progress: see
 * `data/being-confirmed.ts`) are neither failures nor a busy server: they stay queued and are
 * asked about again every 30 s, without holding back the rest of the queue.
 *
 * Exactly-once rests on the server: every operation carries its opId as idempotency key, so
 * anything whose answer was lost (network cut, time-out, crash, a second tab) is simply sent
 * again and answered the same. The lock (Web Locks across tabs) only spares the server the
 * duplicate work.
 */
import {
  DEVICE_ERROR_CODES,
  type EnvelopeKey,
  MAX_PUSH_OPERATIONS,
  type PullResponse,
  type PushResponse,
} from '@kupah/contracts';
import { CONFIRM_RECHECK_MS, isConfirmationAnswer } from '../data/being-confirmed.ts';
import type { SyncStatus } from '../data/terminal-data.ts';
import { backoffDelayMs, SYNC_BACKOFF } from './backoff.ts';
import { type DeviceApi, DeviceApiError, type PullReport } from './device-api.ts';
import { type SyncLocks, syncLockName } from './sync-lock.ts';
import type { ClaimedOperation, QueueStats, SyncSession, SyncStore } from './sync-store.ts';

/** The server takes push bodies up to 1 MiB; stay well under it. */
const MAX_PUSH_BYTES = 900 * 1024;
const PULL_PAGE = 500;
/** A pull that never says "no more" is a server fault, not a reason to loop forever. */
const MAX_PULL_PAGES = 10_000;

export interface OnlineEvents {
  addEventListener(type: 'online' | 'offline' | 'visibilitychange', listener: () => void): void;
  removeEventListener(type: 'online' | 'offline' | 'visibilitychange', listener: () => void): void;
}

/**
 * While the server cannot be reached at all, the next attempt comes after about this long
 * (uniform in ±25 %): trying to connect to a server that is down costs nothing, and the queue
 * should start moving the moment it is back. Server errors back off instead (SYNC_BACKOFF).
 */
export const UNREACHABLE_PROBE_MS = 2_000;

export function probeDelayMs(random: () => number): number {
  return Math.round(UNREACHABLE_PROBE_MS * (0.75 + 0.5 * random()));
}

/** The run failed without reaching the server (connection refused, no network, DNS, TLS). */
export const isUnreachable = (err: unknown): boolean =>
  err instanceof DeviceApiError && err.failure === 'network';

export interface SyncLoopOptions {
  store: SyncStore;
  api: DeviceApi;
  locks: SyncLocks;
  appVersion: () => Promise<string | null>;
  now: () => Date;
  random: () => number;
  /** Between good runs (default 30 s). */
  intervalMs?: number;
  /** `navigator.onLine` where the platform has it. */
  platformOnline?: () => boolean;
  /** Where `online`/`offline` (the window) and `visibilitychange` (the document) come from, if anywhere. */
  events?: OnlineEvents | null;
  /** Whether the page is on screen (`document.visibilityState`), for `visibilitychange`. */
  isVisible?: () => boolean;
  /** Pushes out at once, awaiting their answers (default 3; 1 = one after another). */
  maxPushesInFlight?: number;
  /** Operations per push (default and at most the contract's 100). */
  maxBatchOperations?: number;
  /** An item being confirmed is asked about again this long after its last attempt (default 30 s). */
  confirmRecheckMs?: number;
  /**
   * Checks every envelope key a push or pull answer carries before it is stored (the signing key
   * pinned at pairing: `envelopeKeyGuard` in data/pairing-service.ts). A refused key is not stored
   * (the held key is kept) and the run ends in a visible error. Absent: keys are stored unchecked.
   */
  keyGuard?: {
    /** `signingKey`: the one a pull answer offers (pinned only by a device that has none yet). */
    check(
      key: EnvelopeKey,
      signingKey?: PullResponse['signingKey'],
    ): Promise<{ accepted: boolean; key: EnvelopeKey }>;
  };
}

/** A server answer carried an envelope key the pinned signing key did not sign: it was refused. */
export class EnvelopeKeyRefused extends Error {
  constructor() {
    super(
      'The server sent an encryption key that is not signed by the server this terminal was paired with: ' +
        'it was refused and the previous key kept. Something on the network may be intercepting; if the ' +
        'server was reinstalled, pair the terminal again.',
    );
    this.name = 'EnvelopeKeyRefused';
  }
}

export interface SyncLoop {
  /** Runs now, whatever the back-off (after the run in progress, if any). Never rejects: see the status. */
  syncNow(): Promise<void>;
  status(): SyncStatus;
  onStatus(listener: (s: SyncStatus) => void): () => void;
  start(): void;
  stop(): void;
  /** A new item is waiting: run soon unless backing off. */
  nudge(): void;
  /** Offline for the offline limits: the platform says so, or the last run did not get through. */
  isOffline(): boolean;
  /** The device was paired, paired again or unpaired: forget the failures, show the new phase, sync. */
  sessionChanged(): Promise<void>;
}

type RunOutcome = 'ok' | 'busy' | 'failed' | 'revoked' | 'unpaired';

interface PushOutcome {
  /** A retryable answer other than "being confirmed" (server busy): the next run backs off. */
  retryLater: boolean;
  /** Items are being confirmed: the next run comes within `confirmRecheckMs`. */
  awaitingConfirmation: boolean;
}

export const DEFAULT_PUSHES_IN_FLIGHT = 3;

const isRevocation = (err: unknown): err is DeviceApiError =>
  err instanceof DeviceApiError && err.status === 403 && err.errorCode === DEVICE_ERROR_CODES.DEVICE_REVOKED;

function describeFailure(err: unknown): string {
  if (err instanceof DeviceApiError) {
    if (err.status === 401) {
      return 'The server does not know this device’s credential: pair the device again (queued items are kept)';
    }
    return err.message;
  }
  return err instanceof Error ? `Sync failed: ${err.message}` : 'Sync failed';
}

/** Operations a 400 names (`operations.3.request…`): malformed items that would block the queue forever. */
function malformedOperations(err: DeviceApiError, batch: readonly ClaimedOperation[]) {
  const out = new Map<string, { errorCode: string; message: string }>();
  for (const f of err.fields) {
    const m = /^operations\.(\d+)(?:\.(.*))?$/.exec(f.field);
    const claimed = m ? batch[Number(m[1])] : undefined;
    if (!claimed) continue;
    const where = m?.[2] ? `${m[2]} ` : '';
    out.set(claimed.operation.opId, {
      errorCode: err.errorCode ?? 'VALIDATION_FAILED',
      message: `The server refused this item: ${where}${f.message}`,
    });
  }
  return [...out].map(([opId, error]) => ({ opId, error }));
}

export function createSyncLoop(opts: SyncLoopOptions): SyncLoop {
  const { store, api, locks, now, random } = opts;
  const intervalMs = opts.intervalMs ?? 30_000;
  const platformOnline = opts.platformOnline ?? (() => true);
  const maxInFlight = Math.max(1, Math.floor(opts.maxPushesInFlight ?? DEFAULT_PUSHES_IN_FLIGHT));
  const maxBatch = Math.max(
    1,
    Math.min(MAX_PUSH_OPERATIONS, Math.floor(opts.maxBatchOperations ?? MAX_PUSH_OPERATIONS)),
  );
  const confirmRecheckMs = opts.confirmRecheckMs ?? CONFIRM_RECHECK_MS;

  let failures = 0;
  /** Consecutive failed runs that reached the server (errors it answered, time-outs): the back-off's count. */
  let serverFailures = 0;
  /** The last failed run could not reach the server: probe soon rather than back off. */
  let unreachable = false;
  let busyStreak = 0;
  let retryAfterMs = 0;
  let awaitingConfirmation = false;
  let batchLimit = maxBatch;
  let started = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let timerIsBackoff = false;
  let running: Promise<RunOutcome> | null = null;
  let rerun: Promise<RunOutcome> | null = null;
  const listeners = new Set<(s: SyncStatus) => void>();
  /** A refused envelope key was seen in this run (the run then fails once its answers are applied). */
  let keyRefused = false;

  /** The key to store of an answer's key: the key itself, or (refused) the one held. */
  async function guardedKey(key: EnvelopeKey, signingKey?: PullResponse['signingKey']): Promise<EnvelopeKey> {
    if (!opts.keyGuard) return key;
    const verdict = await opts.keyGuard.check(key, signingKey);
    if (!verdict.accepted) keyRefused = true;
    return verdict.key;
  }

  let status: SyncStatus = {
    online: platformOnline(),
    phase: 'idle',
    progress: null,
    lastSyncAt: null,
    lastError: null,
    nextAttemptAt: null,
  };

  function setStatus(patch: Partial<SyncStatus>): void {
    status = { ...status, ...patch, online: platformOnline() && failures === 0 };
    for (const l of listeners) {
      try {
        l(status);
      } catch {
        // A listener's fault is not the loop's.
      }
    }
  }

  const ready = (async () => {
    const [saved, session] = await Promise.all([
      store.loadRunState().catch(() => null),
      store.session().catch(() => null),
    ]);
    if (saved) failures = saved.failures;
    setStatus({
      lastSyncAt: saved?.lastSyncAt ?? null,
      lastError: saved?.lastError ?? null,
      phase: !session ? 'unpaired' : session.revoked ? 'revoked' : failures > 0 ? 'waiting' : 'idle',
    });
  })();

  async function pushQueue(session: SyncSession, stats: QueueStats): Promise<PushOutcome> {
    const appVersion = await opts.appVersion().catch(() => null);
    /** Claimed in this run: in flight, or answered. Never claimed again in it. */
    const skip = new Set<string>();
    /** Batches not finished: on the wire, or their answers being applied. */
    const tasks = new Set<Promise<void>>();
    /** Pushes on the wire (sent, no answer yet): at most `maxInFlight`. */
    let onWire = 0;
    let wake: () => void = () => {};
    const failed: unknown[] = [];
    const outcome: PushOutcome = {
      retryLater: false,
      awaitingConfirmation: (stats.confirming ?? 0) > 0,
    };
    let sent = 0;
    let sending = 0;
    let total = stats.depth;
    if (total > 0) setStatus({ phase: 'pushing', progress: { sent, total } });

    /** Items given back within the run (a 400 naming others, a 413): they may be claimed again. */
    const unclaim = (ids: readonly string[]) => {
      for (const id of ids) skip.delete(id);
    };

    /** A failure that ends the run: no batch is claimed after it (recorded before anything is awaited). */
    const stop = (err: unknown) => {
      failed.push(err);
      wake();
    };

    /** One push: its answers applied in one transaction, or its items back to queued. */
    async function send(batch: readonly ClaimedOperation[]): Promise<void> {
      const ids = batch.map((b) => b.operation.opId);
      let response: PushResponse;
      onWire++;
      try {
        response = await api.push(session.serverUrl, session.credential, {
          deviceId: session.deviceId,
          appVersion,
          // What the device still holds unanswered (items in other pushes in flight included).
          queue: { depth: stats.depth, totalMinor: stats.totalMinor, byKid: { ...stats.byKid } },
          operations: batch.map((b) => b.operation),
        });
      } catch (err) {
        onWire--;
        const malformed =
          err instanceof DeviceApiError && err.status === 400 ? malformedOperations(err, batch) : [];
        const smaller = err instanceof DeviceApiError && err.status === 413 && batch.length > 1;
        if (malformed.length === 0 && !smaller) stop(err);
        else wake();
        if (malformed.length > 0) await store.failOperations(malformed, now());
        await store.releaseBatch(ids);
        if (smaller) batchLimit = Math.min(batchLimit, Math.max(1, Math.floor(batch.length / 2)));
        // A push costs one rate-limit token per operation: one refused for its size alone would be
        // refused forever when the organisation's burst is below it. Halve it (for the runs after
        // this one, which wait out Retry-After) until it fits; a run that ends well resets it.
        const throttled = err instanceof DeviceApiError && err.status === 429 && batch.length > 1;
        if (throttled) batchLimit = Math.min(batchLimit, Math.max(1, Math.floor(batch.length / 2)));
        // Refused because of some of them, or too big: the others may go again in this run.
        if (malformed.length > 0 || smaller) unclaim(ids);
        return;
      }
      // Its answer is here: the next push may leave while this one's answers are applied.
      onWire--;
      wake();
      const results = response.results;
      try {
        await store.applyResults(results, await guardedKey(response.encryptionKey), now());
      } catch (err) {
        stop(err);
        await store.releaseBatch(ids);
        return;
      }
      const answered = new Map(results.map((r) => [r.opId.toLowerCase(), r]));
      const unanswered: string[] = [];
      for (const claimed of batch) {
        const r = answered.get(claimed.operation.opId.toLowerCase());
        if (!r) {
          unanswered.push(claimed.operation.opId);
          continue;
        }
        if (r.retryable) {
          if (isConfirmationAnswer(r)) outcome.awaitingConfirmation = true;
          else outcome.retryLater = true;
          continue;
        }
        stats.depth = Math.max(0, stats.depth - 1);
        stats.totalMinor = Math.max(0, stats.totalMinor - claimed.amountMinor);
        if (claimed.kid && stats.byKid[claimed.kid]) stats.byKid[claimed.kid]! -= 1;
      }
      sent += batch.length - unanswered.length;
      setStatus({ progress: { sent, total } });
      if (unanswered.length > 0) {
        stop(
          new DeviceApiError('protocol', `The server did not answer ${unanswered.length} of the items sent`),
        );
        await store.releaseBatch(unanswered);
      }
    }

    function launch(batch: ClaimedOperation[]): void {
      sending += batch.length;
      const task: Promise<void> = send(batch)
        // Only the durable layer failing while giving items back ends up here.
        .catch(stop)
        .finally(() => {
          sending -= batch.length;
          tasks.delete(task);
          wake();
        });
      tasks.add(task);
    }

    // Claim and send until the queue is empty or a push fails: at most `maxInFlight` pushes on
    // the wire, and (should applying ever fall behind) at most twice that many batches unfinished.
    while (failed.length === 0) {
      if (onWire >= maxInFlight || tasks.size >= 2 * maxInFlight) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        continue;
      }
      let batch: ClaimedOperation[];
      try {
        batch = await store.claimBatch({
          deviceId: session.deviceId,
          maxOperations: batchLimit,
          maxBytes: MAX_PUSH_BYTES,
          skip,
          now: now(),
          confirmRecheckMs,
        });
      } catch (err) {
        failed.push(err);
        break;
      }
      if (batch.length === 0) {
        if (tasks.size === 0) break;
        // A batch not finished may give items back (a 400 naming others, a 413): look again after it.
        await Promise.race(tasks);
        continue;
      }
      // Marked `sending` durably: it goes out even if a push failed meanwhile (it is in flight).
      for (const b of batch) skip.add(b.operation.opId);
      total = Math.max(total, sent + sending + batch.length);
      setStatus({ phase: 'pushing', progress: { sent, total } });
      launch(batch);
    }
    // After a failure: what is in flight finishes, and its answers are applied, before the run ends.
    await Promise.all(tasks);
    if (failed.length > 0) throw failed.find(isRevocation) ?? failed[0];
    return outcome;
  }

  async function pullAll(session: SyncSession): Promise<void> {
    setStatus({ phase: 'pulling', progress: null });
    let cursor = await store.pullCursor();
    // The first page reports the device's name and its queue now that the pushes are answered
    // (the push reported the queue before them), so the organisation sees what truly waits.
    const left = await store.queueStats(session.deviceId);
    let report: PullReport | undefined = {
      deviceName: session.deviceName ?? null,
      queueDepth: left.depth,
      queueTotalMinor: left.totalMinor,
    };
    for (let page = 0; page < MAX_PULL_PAGES; page++) {
      let answer: Awaited<ReturnType<DeviceApi['pull']>>;
      try {
        answer = await api.pull(session.serverUrl, session.credential, cursor, PULL_PAGE, report);
        report = undefined;
      } catch (err) {
        // A cursor the server no longer knows (its data was restored): start again from scratch.
        const badCursor =
          err instanceof DeviceApiError && err.status === 400 && err.fields.some((f) => f.field === 'cursor');
        if (badCursor && cursor !== null) {
          await store.resetPullCursor();
          cursor = null;
          continue;
        }
        throw err;
      }
      await store.applyPull({
        ...answer,
        encryptionKey: await guardedKey(answer.encryptionKey, answer.signingKey),
      });
      cursor = answer.cursor;
      if (!answer.more) return;
    }
  }

  /** Shift closes made on the device (online or offline) go to the server once it answers. */
  async function reportShiftCloses(session: SyncSession): Promise<void> {
    if (!api.closeShift || !store.unreportedShiftCloses || !store.markShiftReported) return;
    for (const close of await store.unreportedShiftCloses()) {
      const answer = await api.closeShift(session.serverUrl, session.credential, close);
      await store.markShiftReported(close.closeId, answer.server, now());
    }
  }

  /**
   * Receipts asked for after their payment was forwarded go on their own, with the receipt number.
   * The server's refusal (a 4xx: not this device's payment, receipts off) is final and shown; no
   * answer leaves it for the next run.
   */
  async function sendReceipts(session: SyncSession): Promise<void> {
    if (!api.sendReceipt || !store.receiptsToSend || !store.markReceipt) return;
    for (const r of await store.receiptsToSend(session.deviceId)) {
      try {
        await api.sendReceipt(session.serverUrl, session.credential, {
          receiptNum: r.receiptNum,
          email: r.email,
          language: r.language,
        });
        await store.markReceipt(r.id, r.email, { state: 'sent' });
      } catch (err) {
        if (!(err instanceof DeviceApiError) || err.transient || err.errorCode === 'DEVICE_REVOKED')
          throw err;
        await store.markReceipt(r.id, r.email, { state: 'failed', error: err.errorCode ?? err.message });
      }
    }
  }

  async function runLocked(session: SyncSession): Promise<PushOutcome> {
    keyRefused = false;
    await store.expireDue(now());
    const stats = await store.queueStats(session.deviceId);
    const pushed = await pushQueue(session, stats);
    await pullAll(session);
    await reportShiftCloses(session);
    await sendReceipts(session);
    // The answers were applied (with the held key); the refusal must be seen, not swallowed.
    if (keyRefused) throw new EnvelopeKeyRefused();
    return pushed;
  }

  async function runOnce(): Promise<RunOutcome> {
    await ready;
    let session: SyncSession | null;
    try {
      session = await store.session();
    } catch (err) {
      failures++;
      setStatus({ phase: 'waiting', progress: null, lastError: describeFailure(err) });
      return 'failed';
    }
    if (!session) {
      setStatus({ phase: 'unpaired', progress: null });
      return 'unpaired';
    }
    if (session.revoked) {
      setStatus({ phase: 'revoked', progress: null, nextAttemptAt: null });
      return 'revoked';
    }
    const active = session;
    try {
      const pushed = await locks.request(syncLockName(active.deviceId), () => runLocked(active));
      const { retryLater } = pushed;
      failures = 0;
      serverFailures = 0;
      unreachable = false;
      retryAfterMs = 0;
      awaitingConfirmation = pushed.awaitingConfirmation;
      busyStreak = retryLater ? busyStreak + 1 : 0;
      if (!retryLater) batchLimit = maxBatch;
      const lastSyncAt = now().toISOString();
      setStatus({ phase: 'idle', progress: null, lastSyncAt, lastError: null });
      await store.saveRunState({ lastSyncAt, lastError: null, failures: 0 }).catch(() => {});
      return retryLater ? 'busy' : 'ok';
    } catch (err) {
      if (isRevocation(err)) {
        await store.markRevoked(err.message, now()).catch(() => {});
        setStatus({ phase: 'revoked', progress: null, lastError: err.message, nextAttemptAt: null });
        return 'revoked';
      }
      if (err instanceof EnvelopeKeyRefused) {
        // The server answered and its answers were applied: the device is online (its offline
        // limits must not apply), but the refused key stays visible until it is resolved.
        failures = 0;
        serverFailures = 0;
        unreachable = false;
        retryAfterMs = 0;
        const lastError = describeFailure(err);
        const lastSyncAt = now().toISOString();
        setStatus({ phase: 'idle', progress: null, lastSyncAt, lastError });
        await store.saveRunState({ lastSyncAt, lastError, failures: 0 }).catch(() => {});
        return 'ok';
      }
      failures++;
      unreachable = isUnreachable(err);
      if (!unreachable) serverFailures++;
      retryAfterMs = err instanceof DeviceApiError ? (err.retryAfterMs ?? 0) : 0;
      const lastError = describeFailure(err);
      setStatus({ phase: 'waiting', progress: null, lastError });
      await store.saveRunState({ lastSyncAt: status.lastSyncAt, lastError, failures }).catch(() => {});
      return 'failed';
    }
  }

  function clearTimer(): void {
    if (timer) clearTimeout(timer);
    timer = null;
    timerIsBackoff = false;
  }

  function scheduleIn(delayMs: number, backoff: boolean): void {
    clearTimer();
    if (!started) return;
    timerIsBackoff = backoff;
    timer = setTimeout(() => {
      timer = null;
      timerIsBackoff = false;
      void requestRun();
    }, delayMs);
    setStatus({ nextAttemptAt: backoff ? new Date(now().getTime() + delayMs).toISOString() : null });
  }

  function afterRun(outcome: RunOutcome): void {
    if (!started) return;
    switch (outcome) {
      case 'revoked':
      case 'unpaired':
        clearTimer();
        setStatus({ nextAttemptAt: null });
        return;
      case 'failed':
        scheduleIn(
          unreachable
            ? probeDelayMs(random)
            : backoffDelayMs(Math.max(1, serverFailures), random, SYNC_BACKOFF, retryAfterMs),
          true,
        );
        return;
      case 'busy':
        scheduleIn(backoffDelayMs(busyStreak, random), true);
        return;
      case 'ok':
        // Items being confirmed are asked about again soon; nudges still start runs meanwhile.
        scheduleIn(awaitingConfirmation ? Math.min(intervalMs, confirmRecheckMs) : intervalMs, false);
    }
  }

  /** One run at a time in this instance; calls during a run share one follow-up run. */
  function requestRun(): Promise<RunOutcome> {
    if (!running) {
      clearTimer();
      if (status.nextAttemptAt) setStatus({ nextAttemptAt: null });
      const run = runOnce().catch((): RunOutcome => 'failed');
      running = run;
      void run.then((outcome) => {
        running = null;
        afterRun(outcome);
      });
      return run;
    }
    rerun ??= running.then(() => {
      rerun = null;
      return requestRun();
    });
    return rerun;
  }

  const onOnline = () => {
    setStatus({});
    void requestRun();
  };
  const onOffline = () => setStatus({});
  /** Back on screen (a laptop lid opened, a tab brought forward): a failed or stale sync is retried now. */
  const onVisible = () => {
    if (opts.isVisible && !opts.isVisible()) return;
    if (failures > 0 || awaitingConfirmation) void requestRun();
  };

  return {
    async syncNow() {
      await requestRun();
    },
    status: () => status,
    onStatus(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    start() {
      if (started) return;
      started = true;
      opts.events?.addEventListener('online', onOnline);
      opts.events?.addEventListener('offline', onOffline);
      opts.events?.addEventListener('visibilitychange', onVisible);
      void requestRun();
    },
    stop() {
      started = false;
      clearTimer();
      opts.events?.removeEventListener('online', onOnline);
      opts.events?.removeEventListener('offline', onOffline);
      opts.events?.removeEventListener('visibilitychange', onVisible);
    },
    nudge() {
      if (!started || status.phase === 'revoked') return;
      // Offline, a run cannot get through: the `online` event starts one. (Without this, every
      // donation taken offline queued one more doomed run, each reading the whole outbox.)
      if (!platformOnline()) return;
      if (timer && timerIsBackoff) return;
      void requestRun();
    },
    isOffline: () => !platformOnline() || failures > 0,
    async sessionChanged() {
      await ready;
      failures = 0;
      serverFailures = 0;
      unreachable = false;
      busyStreak = 0;
      retryAfterMs = 0;
      awaitingConfirmation = false;
      batchLimit = maxBatch;
      const session = await store.session().catch(() => null);
      clearTimer();
      setStatus({
        phase: !session ? 'unpaired' : session.revoked ? 'revoked' : 'idle',
        progress: null,
        lastError: null,
        nextAttemptAt: null,
      });
      await store
        .saveRunState({ lastSyncAt: status.lastSyncAt, lastError: null, failures: 0 })
        .catch(() => {});
      if (started && session && !session.revoked) void requestRun();
    },
  };
}
