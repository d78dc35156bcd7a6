/**
 * Turning what the cashier entered into outbox items. The order is the point of the module:
 * complete the request (org, opId, device info, collector), validate it, check the offline
 * limits, seal the card or bank fields, and only then write — the item with its sequence number
 * and the new unsent total in one transaction — before anyone is told "saved". Nothing secret
 * reaches IndexedDB in clear, and nothing here logs.
 */
import {
  type EnvelopeKey,
  issuesToFields,
  saveDonorRequest,
  sealAadV2,
  type TerminalBridge,
  voidRequest,
} from '@kupah/contracts';
import { createSealer } from '@kupah/envelope';
import { cachedDeviceFacts, deviceInfoOf, formatLocalRef, localRefPrefix } from './device-info.ts';
import { checkEntry, describeFields } from './entry-validation.ts';
import { readLocalSettings } from './local-settings.ts';
import { insertItem, toItem } from './outbox-repo.ts';
import { splitSecrets } from './secret-fields.ts';
import { type OutboxItem, OutboxRefusal, type Pairing } from './terminal-data.ts';
import { type OutboxRow, readKv, type TerminalDatabase } from './terminal-database.ts';

const HOUR_MS = 3_600_000;

type Sealer = ReturnType<typeof createSealer>;

/** Minor units as the cashier reads them: 150000 → "1,500.00". */
export const money = (minor: number): string =>
  (minor / 100).toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

export const asRecord = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

function nameOf(person: Record<string, unknown>): string | null {
  const join = (...parts: unknown[]) =>
    parts
      .filter((p): p is string => typeof p === 'string' && p.trim() !== '')
      .map((p) => p.trim())
      .join(' ');
  return (
    join(person.firstName, person.lastName) || join(person.firstNameHebrew, person.lastNameHebrew) || null
  );
}

/**
 * An entry over the offline limits while the terminal believes it is online: it may be written
 * only once a sync has just reached the server (`verifiedOnline`). Nothing was written.
 */
export class NeedsOnlineAuthorisation extends Error {
  constructor(readonly refusal: OutboxRefusal) {
    super(refusal.message);
    this.name = 'NeedsOnlineAuthorisation';
  }
}

export interface OutboxEntryDeps {
  db: TerminalDatabase;
  bridge: TerminalBridge;
  now: () => Date;
  /** Offline for the limits: the platform says so, or the last sync did not get through. */
  isOffline: () => boolean;
  /** After every write (tell the listeners, nudge the sync loop). */
  written: () => void;
}

export interface OutboxEntry {
  queueDonation(
    kind: 'charge' | 'schedule',
    entryRequest: Record<string, unknown>,
    swiped: boolean,
    replacing?: OutboxRow,
    opts?: { verifiedOnline?: boolean },
  ): Promise<OutboxItem>;
  queueRecord(
    kind: 'void' | 'saveDonor',
    request: Record<string, unknown>,
    replacing?: OutboxRow,
  ): Promise<OutboxItem>;
  /** The request of an old item, ready to be completed again (new opId, new device info). */
  requestForCopy(row: OutboxRow): Record<string, unknown>;
}

export function createOutboxEntry(deps: OutboxEntryDeps): OutboxEntry {
  const { db, bridge, now } = deps;
  const facts = cachedDeviceFacts(bridge);
  const sealers = new Map<string, Sealer>();

  /** A sealer per server key (the key is imported once, not per donation). */
  function sealerFor(key: EnvelopeKey): Sealer {
    let sealer = sealers.get(key.kid);
    if (!sealer) {
      sealer = createSealer(key);
      sealers.set(key.kid, sealer);
    }
    return sealer;
  }

  async function activePairing(): Promise<Pairing> {
    const [pairing, revoked] = await Promise.all([readKv(db, 'pairing'), readKv(db, 'revoked')]);
    if (!pairing) {
      throw new OutboxRefusal('NOT_PAIRED', 'This terminal is not paired with a server: pair it first');
    }
    if (revoked) {
      throw new OutboxRefusal(
        'NOT_PAIRED',
        `This device was revoked by the organisation: ${revoked.message}`,
      );
    }
    return pairing;
  }

  const getLocalSettings = () => readLocalSettings(db);

  function written(row: OutboxRow): OutboxItem {
    deps.written();
    return toItem(row);
  }

  /**
   * Queues a charge or schedule: the request is completed (org, opId, device info, collector),
   * validated, checked against the offline limits, its secrets sealed, and written.
   */
  async function queueDonation(
    kind: 'charge' | 'schedule',
    entryRequest: Record<string, unknown>,
    swiped: boolean,
    replacing?: OutboxRow,
    opts: { verifiedOnline?: boolean } = {},
  ): Promise<OutboxItem> {
    const [pairing, local] = await Promise.all([activePairing(), getLocalSettings()]);
    const created = now();
    const createdAt = created.toISOString();
    const opId = crypto.randomUUID();
    const info = await deviceInfoOf(local, facts, bridge, pairing.settings, createdAt);

    const { orgGuid: _alias, collectorID: _collectorAlias, ...rest } = entryRequest;
    const request: Record<string, unknown> = {
      ...rest,
      orgGUID: pairing.settings.orgGuid,
      uniqueTransactionId: opId,
      deviceInfo: info,
    };
    if (local.mode === 'collector') {
      if (!local.collectorAccountNum) {
        throw new OutboxRefusal('INVALID', 'Collector mode: choose the collector in the settings first', [
          { field: 'collectorId', message: 'is required in collector mode' },
        ]);
      }
      request.collectorId = local.collectorAccountNum;
    }

    const check = checkEntry(kind, request, { now: created, settings: pairing.settings, swiped });
    if (!check.ok) throw new OutboxRefusal('INVALID', describeFields(check.fields), check.fields);
    const entry = check.value;
    const limits = pairing.settings.offline;
    const offline = deps.isOffline();
    // Over an offline limit, a donation is taken only with the server answering right now: the
    // terminal's "online" may be a sync that got through minutes ago, and the network may have
    // dropped since. Known offline, it is refused; otherwise the caller syncs first (nothing is
    // written before) and comes back with `verifiedOnline`.
    const overLimit = (refusal: OutboxRefusal): void => {
      if (offline) throw refusal;
      if (!opts.verifiedOnline) throw new NeedsOnlineAuthorisation(refusal);
    };
    if (entry.largestChargeMinor > limits.perPaymentMinor) {
      overLimit(
        new OutboxRefusal(
          'OVER_PAYMENT_LIMIT',
          `Offline, one payment may be at most ${money(limits.perPaymentMinor)}; this one is ${money(entry.largestChargeMinor)}. Take a smaller amount, or wait until the terminal is back online.`,
          [{ field: 'amount', message: `is over the offline limit of ${money(limits.perPaymentMinor)}` }],
        ),
      );
    }

    const { clear, secrets } = splitSecrets(request);
    // The box is bound to every clear field the item is sent with (amount, currency, donor,
    // collector, schedule, time, offline, …): the server opens it only with those very fields.
    const sealed = secrets
      ? await sealerFor(pairing.encryptionKey).seal(
          secrets,
          sealAadV2(pairing.deviceId, { opId, kind, deviceCreatedDate: createdAt, offline, request: clear }),
        )
      : null;
    const prefix = localRefPrefix(info.deviceName ?? pairing.settings.deviceName);
    const donor = asRecord(request.donor);
    // A donor picked from the list is sent by account number alone: its name (for the queue and
    // the receipt) comes from the reference data this device holds.
    let donorName = nameOf(donor);
    if (!donorName && typeof donor.accountNum === 'string') {
      const known = await db.donors.get(donor.accountNum).catch(() => undefined);
      donorName = known ? nameOf(known as unknown as Record<string, unknown>) : null;
    }

    const row = await insertItem(
      db,
      (seq, held) => {
        if (held + entry.amountMinor > limits.totalMinor) {
          overLimit(
            new OutboxRefusal(
              'OVER_DEVICE_LIMIT',
              `Offline, this device may hold at most ${money(limits.totalMinor)} not yet forwarded; it holds ${money(held)}, and this donation of ${money(entry.amountMinor)} would make ${money(held + entry.amountMinor)}. Wait until the terminal is back online.`,
              [{ field: 'amount', message: `would take the offline total over ${money(limits.totalMinor)}` }],
            ),
          );
        }
        return {
          id: opId,
          localRef: formatLocalRef(prefix, seq),
          kind,
          state: 'queued',
          createdAt,
          expiresAt: new Date(created.getTime() + limits.expiryHours * HOUR_MS).toISOString(),
          amountMinor: entry.amountMinor,
          currency: entry.currency,
          method: entry.method,
          display: {
            donorName,
            brand: entry.brand,
            last4: entry.last4,
            frequency: entry.frequency,
            collectorAccountNum: typeof request.collectorId === 'string' ? request.collectorId : null,
          },
          request: clear,
          kid: sealed?.kid ?? null,
          attempts: 0,
          lastAttemptAt: null,
          result: null,
          receiptNum: null,
          scheduleNum: null,
          error: null,
          discardReason: null,
          seq,
          deviceId: pairing.deviceId,
          sealed,
          offline,
        } satisfies OutboxRow;
      },
      replacing?.id,
    );
    return written(row);
  }

  /** Queues a void or a donor save (no money moves, no secrets, no offline limits, no expiry). */
  async function queueRecord(
    kind: 'void' | 'saveDonor',
    request: Record<string, unknown>,
    replacing?: OutboxRow,
  ): Promise<OutboxItem> {
    const pairing = await activePairing();
    const full: Record<string, unknown> =
      kind === 'void'
        ? { ...request, orgGUID: pairing.settings.orgGuid }
        : { ...request, orgGuid: pairing.settings.orgGuid };
    const parsed = kind === 'void' ? voidRequest.safeParse(full) : saveDonorRequest.safeParse(full);
    if (!parsed.success) {
      const fields = issuesToFields(parsed.error.issues);
      throw new OutboxRefusal('INVALID', describeFields(fields), fields);
    }
    const [local, created] = [await getLocalSettings(), now()];
    const createdAt = created.toISOString();
    const opId = crypto.randomUUID();
    const prefix = localRefPrefix(
      local.deviceName?.trim() || (await facts.hostName())?.trim() || pairing.settings.deviceName,
    );
    const row = await insertItem(
      db,
      (seq) =>
        ({
          id: opId,
          localRef: formatLocalRef(prefix, seq),
          kind,
          state: 'queued',
          createdAt,
          expiresAt: new Date(
            created.getTime() + pairing.settings.offline.expiryHours * HOUR_MS,
          ).toISOString(),
          amountMinor: 0,
          currency: null,
          method: null,
          display: {
            donorName: kind === 'saveDonor' ? nameOf(full) : null,
            brand: null,
            last4: null,
            frequency: null,
            collectorAccountNum: null,
          },
          request: full,
          kid: null,
          attempts: 0,
          lastAttemptAt: null,
          result: null,
          receiptNum: kind === 'void' ? String(full.receiptNum ?? '') || null : null,
          scheduleNum: null,
          error: null,
          discardReason: null,
          seq,
          deviceId: pairing.deviceId,
          sealed: null,
        }) satisfies OutboxRow,
      replacing?.id,
    );
    return written(row);
  }

  /** The request of an old item, ready to be completed again (new opId, new device info). */
  function requestForCopy(row: OutboxRow): Record<string, unknown> {
    const {
      uniqueTransactionId: _id,
      deviceInfo: _info,
      orgGUID: _org,
      orgGuid: _alias,
      ...rest
    } = structuredClone(row.request);
    return rest;
  }

  return { queueDonation, queueRecord, requestForCopy };
}
