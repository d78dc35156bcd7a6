/**
 * The webhook dispatcher: a worker inside each server process. It claims due deliveries (safe with
 * any number of instances on one PostgreSQL), signs them per Standard Webhooks, sends them, and
 * records the outcome: delivered, retried on the schedule, or dead-lettered. It wakes on NOTIFY
 * (sent when an event commits) and polls as a backstop.
 */
import { Webhook } from 'standardwebhooks';
import type { Deps } from '../deps.ts';
import { WEBHOOK_CHANNEL } from '../outbox/repo.ts';
import { workerLoop } from '../outbox/worker-loop.ts';
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

  return workerLoop(deps, {
    channel: WEBHOOK_CHANNEL,
    batchSize,
    pollMs,
    leaseMs,
    claim: (now, leaseUntil, limit) => claimDue(db, now, leaseUntil, limit),
    deliver,
    refreshPending: async () => metrics.webhooksPending.set(await countPending(db)),
    messages: { deliveryFailed: 'webhook delivery failed', loopFailed: 'webhook dispatcher loop' },
    // Secrets an earlier version stored in clear are sealed before anything is sent.
    beforeStart: () => sealClearSecrets(db, kekOfDeps(deps)),
  });
}
export type WebhookDispatcher = ReturnType<typeof webhookDispatcher>;
