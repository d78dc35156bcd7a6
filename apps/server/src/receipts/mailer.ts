/**
 * The receipt mailer: a worker inside each server process, modelled on the webhook dispatcher. It
 * claims due receipt e-mails (safe with any number of instances on one PostgreSQL), renders each
 * from what is recorded now, sends it over SMTP (nodemailer) outside any transaction, and records
 * the outcome: sent; retried with back-off; bounced (the server refused the address for good); or
 * failed (given up). It wakes on NOTIFY (sent when a receipt is committed) and polls as a backstop.
 *
 * Exactly once, honestly: a delivery is marked sent only after the SMTP server accepted it (250).
 * If this process dies between that answer and the mark, the lease runs out and the same e-mail is
 * sent again, with the same Message-ID (fixed when the delivery was written), which mail systems
 * and readers use to drop the duplicate. SMTP gives no stronger promise.
 */
import nodemailer, { type TransportOptions } from 'nodemailer';
import type { Deps } from '../deps.ts';
import { workerLoop } from '../outbox/worker-loop.ts';
import { renderDelivery } from './receipt-service.ts';
import {
  claimDue,
  countPendingDeliveries,
  type DeliveryRow,
  markNotSent,
  markSent,
  RECEIPT_CHANNEL,
} from './repo.ts';

export interface MailerOptions {
  /** `smtp://user:pass@host:port` or `smtps://…`. */
  smtpUrl: string;
  from: string;
  batchSize?: number;
  pollMs?: number;
  /** How long a claimed e-mail waits before another instance sends it (after a crash). */
  leaseMs?: number;
  /** First retry delay, doubled each attempt, at most 6 hours. */
  retryMs?: number;
  /** Attempts before giving up (status failed). */
  maxAttempts?: number;
  /** SMTP connection, greeting and socket time-outs. */
  timeoutMs?: number;
  /** Jitter source (tests pass a seeded one). */
  random?: () => number;
}

const MAX_DELAY_MS = 6 * 3_600_000;

/** The delay before attempt `attempt + 1`: exponential with ±20 % jitter. */
export function retryDelayMs(attempt: number, baseMs: number, random: number): number {
  const exp = Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (0.8 + 0.4 * random));
}

interface SmtpError extends Error {
  code?: string;
  responseCode?: number;
  response?: string;
}

/**
 * A refusal for good: the server answered 5xx to the recipient or the message (no such mailbox,
 * message refused). Anything else — 4xx, a refused or cut connection, a time-out, an
 * authentication failure (the operator's to fix) — is tried again.
 */
export function isBounce(err: SmtpError): boolean {
  return (
    (err.code === 'EENVELOPE' || err.code === 'EMESSAGE') &&
    typeof err.responseCode === 'number' &&
    err.responseCode >= 500 &&
    err.responseCode < 600
  );
}

export function receiptMailer(deps: Deps, opts: MailerOptions) {
  const batchSize = opts.batchSize ?? 20;
  const pollMs = opts.pollMs ?? 2000;
  const leaseMs = opts.leaseMs ?? 120_000;
  const retryMs = opts.retryMs ?? 60_000;
  const maxAttempts = opts.maxAttempts ?? 12;
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const random = opts.random ?? Math.random;
  const { db, logger, metrics } = deps;
  const transport = nodemailer.createTransport({
    url: opts.smtpUrl,
    pool: true,
    maxConnections: 2,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  } as TransportOptions);

  async function deliver(d: DeliveryRow): Promise<void> {
    let error: SmtpError;
    try {
      const mail = await renderDelivery(deps, d);
      if (!mail) {
        await markNotSent(db, d, 'its payment or donor no longer exists', { final: 'failed' });
        return;
      }
      const info = await transport.sendMail({
        from: opts.from,
        to: d.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        messageId: d.messageId,
        headers: { 'X-Kupah-Receipt': `${d.kind} ${d.receiptNum ?? `${d.donorAccount}/${d.year}`}` },
        attachments: [
          {
            filename: mail.attachment.filename,
            content: mail.attachment.content,
            contentType: 'application/pdf',
          },
        ],
      });
      await markSent(db, d, deps.now(), typeof info.response === 'string' ? info.response : null);
      metrics.receiptsOutcome.inc({ outcome: 'sent' });
      return;
    } catch (err) {
      error = err as SmtpError;
    }
    const message = (error.response ?? error.message ?? String(error)).slice(0, 500);
    if (isBounce(error)) {
      await markNotSent(db, d, message, { final: 'bounced' });
      metrics.receiptsOutcome.inc({ outcome: 'bounced' });
      logger.warn({ deliveryId: d.id, kind: d.kind }, 'receipt e-mail bounced');
      return;
    }
    if (d.attempts >= maxAttempts) {
      await markNotSent(db, d, message, { final: 'failed' });
      metrics.receiptsOutcome.inc({ outcome: 'failed' });
      logger.warn({ deliveryId: d.id, kind: d.kind }, 'receipt e-mail failed: given up');
      return;
    }
    const at = new Date(deps.now().getTime() + retryDelayMs(d.attempts, retryMs, random()));
    await markNotSent(db, d, message, { at });
    metrics.receiptsOutcome.inc({ outcome: 'retried' });
  }

  const worker = workerLoop(deps, {
    channel: RECEIPT_CHANNEL,
    batchSize,
    pollMs,
    leaseMs,
    claim: (now, leaseUntil, limit) => claimDue(db, now, leaseUntil, limit),
    deliver,
    refreshPending: async () => metrics.receiptsPending.set(await countPendingDeliveries(db)),
    messages: { deliveryFailed: 'receipt delivery not recorded', loopFailed: 'receipt mailer loop' },
  });
  return {
    ...worker,
    /** Stop claiming; wait for the e-mails in flight to be recorded. */
    async stop() {
      await worker.stop();
      transport.close();
    },
  };
}
export type ReceiptMailer = ReturnType<typeof receiptMailer>;
