/**
 * Card-testing limits, checked in the claim step of the money path (before the gateway is ever
 * called) for the External Charge, SchedulePayment's first payment and device operations alike:
 *
 * - per credential: `declines` declines within `declineWindowMinutes` block its charges for
 *   `coolOffMinutes` (TOO_MANY_DECLINES);
 * - per card (or bank account, or charity card) across the organisation, by keyed fingerprint:
 *   more than `cardAttempts` attempts or `cardDeclines` declines within `cardWindowMinutes` block
 *   that card for the window (CARD_TESTING_SUSPECTED).
 *
 * Everything is counted in the database, so every instance sees the same counts: declines are the
 * payments' own recorded outcomes (the record step of the money path writes them), and attempts are
 * `card_attempts` rows written with the claimed payment. A block is a row in `abuse_blocks`; its
 * start writes a `security_events` row (never card data) and counts a metric.
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import type { Deps } from '../deps.ts';
import type { Instrument } from '../gateway/gateway.ts';
import { ApiError } from '../http/errors.ts';
import type { OrgSettings } from '../orgs/settings.ts';
import { fingerprintsOf, instrumentFingerprint } from './fingerprint.ts';

export type AbuseSettings = OrgSettings['abuse'];

const MINUTE = 60_000;

/** `source:12` or `apiKey:3`: the credential a charge came through. */
export const credentialOf = (caller: Pick<Caller, 'type' | 'id'>): string => `${caller.type}:${caller.id}`;

/** Whether the limits apply to this caller (a sandbox credential only reaches the sandbox gateway). */
export const limitsApply = (caller: Caller): boolean => !caller.sandbox || caller.org.settings.abuse.sandbox;

/** A charge refused by the limits: 429 with Retry-After; `persisted` settles once its block is written. */
export class ChargeBlocked extends ApiError {
  constructor(
    code: typeof ERROR_CODES.TOO_MANY_DECLINES | typeof ERROR_CODES.CARD_TESTING_SUSPECTED,
    message: string,
    retryAfterSeconds: number,
    readonly persisted: Promise<void>,
  ) {
    super(429, code, message, undefined, {
      'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))),
    });
  }
}

interface Counts {
  credential_until: Date | string | null;
  card_until: Date | string | null;
  credential_declines: string | number;
  card_attempts: string | number;
  card_declines: string | number;
}

const countsSql = (column: 'source_id' | 'api_key_id') => `
SELECT
  (SELECT until FROM abuse_blocks WHERE org_id = $1 AND subject = $2 AND until > $4::timestamptz) AS credential_until,
  (SELECT until FROM abuse_blocks WHERE org_id = $1 AND subject = $3 AND until > $4::timestamptz) AS card_until,
  (SELECT count(*) FROM payments
     WHERE ${column} = $5 AND status = 'Declined' AND processed_at > $6::timestamptz)
  + (SELECT count(*) FROM card_verifications
     WHERE org_id = $1 AND credential = $9 AND status = 'Declined' AND created_at > $6::timestamptz)
    AS credential_declines,
  (SELECT count(*) FROM card_attempts
     WHERE org_id = $1 AND fingerprint = $7 AND created_at > $8::timestamptz)
  + (SELECT count(*) FROM card_verifications
     WHERE org_id = $1 AND fingerprint = $7 AND created_at > $8::timestamptz) AS card_attempts,
  (SELECT count(*) FROM card_attempts a JOIN payments p ON p.id = a.payment_id
     WHERE a.org_id = $1 AND a.fingerprint = $7 AND a.created_at > $8::timestamptz
       AND p.status = 'Declined')
  + (SELECT count(*) FROM card_verifications
     WHERE org_id = $1 AND fingerprint = $7 AND created_at > $8::timestamptz AND status = 'Declined')
    AS card_declines`;
const COUNTS_SQL = { source: countsSql('source_id'), apiKey: countsSql('api_key_id') } as const;

/**
 * Start a block (unless one is running) and, when it starts, write its security event: one
 * statement, so the event is written exactly once per block whatever the concurrency.
 */
const BLOCK_SQL = `
WITH started AS (
  INSERT INTO abuse_blocks (org_id, subject, until, reason) VALUES ($1, $2, $3::timestamptz, $4)
  ON CONFLICT (org_id, subject) DO UPDATE SET until = EXCLUDED.until, reason = EXCLUDED.reason
    WHERE abuse_blocks.until <= $5::timestamptz
  RETURNING org_id
)
INSERT INTO security_events (org_id, credential, kind, details, at)
SELECT org_id, $6, $4, $7::jsonb, $5::timestamptz FROM started
RETURNING id`;

const untilDate = (v: Date | string): Date => (v instanceof Date ? v : new Date(v));

/**
 * Refuse the charge (throws `ChargeBlocked`) when the caller's credential or the instrument is
 * over its limits; otherwise the instrument's fingerprint (null for a token, or when the limits do
 * not apply), to record with the claimed payment. Runs in the claim transaction: the block and its
 * event are written on their own (after it rolls back on PGlite), never rolled back with it.
 */
export async function guardCharge(
  tx: Sql,
  deps: Deps,
  caller: Caller,
  instrument: Instrument,
): Promise<string | null> {
  if (!limitsApply(caller)) return null;
  const s = caller.org.settings.abuse;
  const now = deps.now();
  const fingerprint = instrumentFingerprint(fingerprintsOf(deps), instrument);
  const credential = credentialOf(caller);
  const cardSubject = fingerprint ? `card:${fingerprint}` : null;
  const [row] = await tx.query<Counts>(COUNTS_SQL[caller.type], [
    caller.org.id,
    `credential:${credential}`,
    cardSubject,
    now.toISOString(),
    caller.id,
    new Date(now.getTime() - s.declineWindowMinutes * MINUTE).toISOString(),
    fingerprint,
    new Date(now.getTime() - s.cardWindowMinutes * MINUTE).toISOString(),
    credential,
  ]);
  const counts = row!;
  const secondsUntil = (until: Date) => (until.getTime() - now.getTime()) / 1000;

  const credentialRefusal = (until: Date) => {
    deps.metrics.abuseRefused.inc({ code: ERROR_CODES.TOO_MANY_DECLINES });
    return `Too many declined payments from this credential: its charges are refused until ${until.toISOString()}`;
  };
  if (counts.credential_until) {
    const until = untilDate(counts.credential_until);
    throw new ChargeBlocked(
      ERROR_CODES.TOO_MANY_DECLINES,
      credentialRefusal(until),
      secondsUntil(until),
      Promise.resolve(),
    );
  }
  const declines = Number(counts.credential_declines);
  if (declines >= s.declines) {
    const until = new Date(now.getTime() + s.coolOffMinutes * MINUTE);
    const persisted = startBlock(deps, caller, `credential:${credential}`, until, 'credential_declines', {
      credential: caller.masked,
      sourceKind: caller.sourceKind,
      declines,
      windowMinutes: s.declineWindowMinutes,
      coolOffMinutes: s.coolOffMinutes,
    });
    throw new ChargeBlocked(
      ERROR_CODES.TOO_MANY_DECLINES,
      credentialRefusal(until),
      secondsUntil(until),
      persisted,
    );
  }
  if (!fingerprint || !cardSubject) return fingerprint;

  const cardRefusal = (until: Date) => {
    deps.metrics.abuseRefused.inc({ code: ERROR_CODES.CARD_TESTING_SUSPECTED });
    return `This card or account was tried or declined too often: it is refused here until ${until.toISOString()}`;
  };
  if (counts.card_until) {
    const until = untilDate(counts.card_until);
    throw new ChargeBlocked(
      ERROR_CODES.CARD_TESTING_SUSPECTED,
      cardRefusal(until),
      secondsUntil(until),
      Promise.resolve(),
    );
  }
  const attempts = Number(counts.card_attempts);
  const cardDeclines = Number(counts.card_declines);
  if (attempts >= s.cardAttempts || cardDeclines >= s.cardDeclines) {
    const until = new Date(now.getTime() + s.cardWindowMinutes * MINUTE);
    const persisted = startBlock(deps, caller, cardSubject, until, 'card_attempts', {
      credential: caller.masked,
      sourceKind: caller.sourceKind,
      // A short prefix of the keyed fingerprint, to tell cards apart; never a card number.
      cardRef: fingerprint.slice(0, 16),
      attempts,
      declines: cardDeclines,
      windowMinutes: s.cardWindowMinutes,
    });
    throw new ChargeBlocked(
      ERROR_CODES.CARD_TESTING_SUSPECTED,
      cardRefusal(until),
      secondsUntil(until),
      persisted,
    );
  }
  return fingerprint;
}

/** Written on `deps.db` (not the claim transaction, which rolls back); never rejects. */
function startBlock(
  deps: Deps,
  caller: Caller,
  subject: string,
  until: Date,
  kind: 'credential_declines' | 'card_attempts',
  details: Record<string, unknown>,
): Promise<void> {
  const eventKind =
    kind === 'credential_declines' ? 'card_testing_credential_blocked' : 'card_testing_card_blocked';
  return deps.db
    .query<{ id: string }>(BLOCK_SQL, [
      caller.org.id,
      subject,
      until.toISOString(),
      eventKind,
      deps.now().toISOString(),
      credentialOf(caller),
      JSON.stringify(details),
    ])
    .then((rows) => {
      if (rows.length === 0) return;
      deps.metrics.abuseBlocks.inc({ kind });
      deps.logger.warn(
        { orgId: caller.org.id, credential: caller.masked, kind: eventKind, until: until.toISOString() },
        'card testing suspected: charges blocked',
      );
    })
    .catch((err: unknown) => {
      deps.logger.error(
        { orgId: caller.org.id, err: { message: err instanceof Error ? err.message : String(err) } },
        'could not record a card-testing block',
      );
    });
}

/** Record a claimed payment's instrument fingerprint (in the claim transaction). */
export async function recordAttempt(
  tx: Sql,
  orgId: number,
  paymentId: number,
  fingerprint: string,
  at: Date,
): Promise<void> {
  await tx.query(
    'INSERT INTO card_attempts (payment_id, org_id, fingerprint, created_at) VALUES ($1, $2, $3, $4::timestamptz)',
    [paymentId, orgId, fingerprint, at.toISOString()],
  );
}

/**
 * Record the outcome of a verification that charged nothing (`gateway.tokenize` of a schedule
 * starting later), checked first with `guardCharge(deps.db, …)` like a charge: its declines count
 * for the credential and the card as a payment's do.
 */
export async function recordVerification(
  sql: Sql,
  deps: Deps,
  caller: Caller,
  fingerprint: string,
  status: 'Success' | 'Declined' | 'Error',
): Promise<void> {
  await sql.query(
    `INSERT INTO card_verifications (org_id, credential, fingerprint, status, created_at)
     VALUES ($1, $2, $3, $4, $5::timestamptz)`,
    [caller.org.id, credentialOf(caller), fingerprint, status, deps.now().toISOString()],
  );
}

/** A block's settled write, when `err` is a `ChargeBlocked` (so its event is visible before the answer). */
export async function settleBlock(err: unknown): Promise<void> {
  if (err instanceof ChargeBlocked) await err.persisted;
}

/**
 * Forget what no limit looks at any more: card attempts older than `days` (at least 31: longer than
 * any sensible window) and blocks that ended. For the server's periodic purge.
 */
export async function purgeAbuseRecords(sql: Sql, now: Date, days = 31): Promise<number> {
  const before = new Date(now.getTime() - Math.max(31, days) * 24 * 60 * MINUTE).toISOString();
  const attempts = await sql.query(
    'DELETE FROM card_attempts WHERE created_at < $1::timestamptz RETURNING payment_id',
    [before],
  );
  const verifications = await sql.query(
    'DELETE FROM card_verifications WHERE created_at < $1::timestamptz RETURNING id',
    [before],
  );
  const blocks = await sql.query('DELETE FROM abuse_blocks WHERE until < $1::timestamptz RETURNING subject', [
    now.toISOString(),
  ]);
  return attempts.length + verifications.length + blocks.length;
}
