/**
 * The webhook dispatcher: a worker inside each server process. It claims due deliveries (safe with
 * any number of instances on one PostgreSQL), signs them per Standard Webhooks, sends them, and
 * records the outcome: delivered, retried on the schedule, or dead-lettered. It wakes on NOTIFY
 * (sent when an event commits) and polls as a backstop.
 */
import { Webhook } from 'standardwebhooks';
import type { Deps } from '../deps.ts';
import { WEBHOOK_CHANNEL } from '../outbox/repo.ts';
import { sealClearSecrets } from '../secrets/at-rest.ts';
import { kekOfDeps } from '../secrets/server-kek.ts';
import {
  type ClaimedDelivery,
  claimDue,
  countPending,
  disableEndpoint,
  markDelivered,
  markFailed,
  noteEndpointFailure,
  openWebhookSecret,
  recordAttempt,
} from './repo.ts';
import { AUTO_DISABLE_AFTER_MS, nextDelayMs, parseRetryAfter } from './retry-schedule.ts';
import { sendWebhook } from './sender.ts';

export interface DispatcherOptions {
  allowPrivate: boolean;
  batchSize?: number;
  pollMs?: number;
  leaseMs?: number;
  timeoutMs?: number;
  maxResponseBytes?: number;
  /** Jitter source (tests pass a seeded one). */
  random?: () => number;
}

/** Standard Webhooks headers; during a rotation both secrets sign (space-separated signatures). */
export function signHeaders(
  webhookId: string,
  at: Date,
  body: string,
  secrets: string[],
): Record<string, string> {
  return {
    'webhook-id': webhookId,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': secrets.map((s) => new Webhook(s).sign(webhookId, at, body)).join(' '),
    'user-agent': 'Kupah-Webhooks/1.0',
  };
}

export function webhookDispatcher(deps: Deps, opts: DispatcherOptions) {
  const batchSize = opts.batchSize ?? 100;
  const pollMs = opts.pollMs ?? 1000;
  const leaseMs = opts.leaseMs ?? 60_000;
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const maxResponseBytes = opts.maxResponseBytes ?? 64 * 1024;
  const random = opts.random ?? Math.random;
  const { db, metrics, logger } = deps;

  let stopped = true;
  let wake: (() => void) | null = null;
  let woken = false;
  let loop: Promise<void> | null = null;
  let unlisten: (() => Promise<void>) | null = null;

  async function deliver(d: ClaimedDelivery): Promise<void> {
    const sentAt = new Date(); // the signature's timestamp is real time, whatever the scheduling clock says
    let secrets: string[];
    try {
      const kek = kekOfDeps(deps);
      secrets = d.secrets.map((s) => openWebhookSecret(kek, d.orgId, d.endpointKind, s));
    } catch (err) {
      // Sealed under a key this server does not hold: nothing is sent unsigned; retried later.
      throw new Error(
        `the signing secret of endpoint ${d.endpointId} does not open: ${(err as Error).message}`,
      );
    }
    const r = await sendWebhook(d.url, signHeaders(d.webhookId, sentAt, d.body, secrets), d.body, {
      timeoutMs,
      maxResponseBytes,
      allowPrivate: opts.allowPrivate,
    });
    const now = deps.now();
    const code = r.statusCode;
    if (code !== null && code >= 200 && code < 300) {
      await markDelivered(db, d, code, now, { startedAt: sentAt, latencyMs: r.latencyMs, error: null });
      metrics.webhooksDelivered.inc({ type: d.type });
      metrics.webhookLatency.observe(Math.max(0, Date.now() - d.eventCreatedAt.getTime()) / 1000);
      return;
    }
    await recordAttempt(db, {
      deliveryId: d.id,
      attempt: d.attempt,
      startedAt: sentAt,
      statusCode: r.statusCode,
      latencyMs: r.latencyMs,
      error: r.error,
    });
    const error = r.error ?? `HTTP ${code}`;
    if (code === 410) {
      await disableEndpoint(db, d.endpointId, 'the endpoint answered 410 Gone', now);
      await markFailed(db, d, code, error, null);
      metrics.webhooksDead.inc();
      logger.warn(
        { endpointId: d.endpointId, webhookId: d.webhookId },
        'webhook endpoint gone (410): disabled',
      );
      return;
    }
    const failingSince = await noteEndpointFailure(db, d.endpointId, now);
    if (now.getTime() - failingSince.getTime() >= AUTO_DISABLE_AFTER_MS) {
      await disableEndpoint(db, d.endpointId, 'failing for 5 days without a success', now);
      logger.warn({ endpointId: d.endpointId }, 'webhook endpoint failing for 5 days: disabled');
    }
    const delay = nextDelayMs(d.attempt, random(), parseRetryAfter(r.retryAfter, Date.now()));
    await markFailed(db, d, code, error, delay === null ? null : new Date(now.getTime() + delay));
    if (delay === null) metrics.webhooksDead.inc();
    else metrics.webhooksRetried.inc();
  }

  /** Claim and send one batch; returns how many were claimed. */
  async function runOnce(): Promise<number> {
    const now = deps.now();
    const claimed = await claimDue(db, now, new Date(now.getTime() + leaseMs), batchSize);
    await Promise.all(
      claimed.map((d) =>
        deliver(d).catch((err) =>
          logger.error({ err: String(err), deliveryId: d.id }, 'webhook delivery failed'),
        ),
      ),
    );
    return claimed.length;
  }

  /** Run until nothing is due (tests call this after moving the clock). */
  async function drain(): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await runOnce();
      total += n;
      if (n === 0) return total;
    }
  }

  function nudge() {
    woken = true;
    wake?.();
  }

  async function run() {
    let lastCount = 0;
    while (!stopped) {
      try {
        const n = await runOnce();
        if (n === batchSize) continue;
        if (Date.now() - lastCount > 5000) {
          lastCount = Date.now();
          metrics.webhooksPending.set(await countPending(db));
        }
      } catch (err) {
        logger.error({ err: String(err) }, 'webhook dispatcher loop');
      }
      if (stopped) break;
      if (!woken) {
        await new Promise<void>((resolve) => {
          const t = setTimeout(resolve, pollMs);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
      wake = null;
      woken = false;
    }
  }

  return {
    runOnce,
    drain,
    nudge,
    async start() {
      if (!stopped) return;
      // Secrets an earlier version stored in clear are sealed before anything is sent.
      await sealClearSecrets(db, kekOfDeps(deps));
      stopped = false;
      unlisten = await db.listen(WEBHOOK_CHANNEL, nudge).catch((err) => {
        logger.warn({ err: String(err) }, 'LISTEN unavailable; polling only');
        return null;
      });
      loop = run();
    },
    /** Stop claiming; wait for the attempts in flight to be recorded. */
    async stop() {
      stopped = true;
      wake?.();
      await loop;
      await unlisten?.();
    },
  };
}
export type WebhookDispatcher = ReturnType<typeof webhookDispatcher>;
