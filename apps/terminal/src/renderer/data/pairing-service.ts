/**
 * Pairing a terminal with a server (a one-time code buys the device id, its credential, the
 * organisation's settings, the envelope key and the first reference data) and unpairing it.
 * Neither may strand money: both are refused while items of the current pairing wait to be
 * forwarded, unless the server has revoked the device (then nothing can be forwarded anyway).
 */
import type { TerminalBridge } from '@kupah/contracts';
import { type DeviceApi, DeviceApiError, normaliseServerUrl } from '../sync/device-api.ts';
import { protectCredential } from './credential-vault.ts';
import { mergeLocalSettings, readLocalSettings } from './local-settings.ts';
import { failUnsendable, queueStats } from './outbox-repo.ts';
import { applyPullPage, clearReferenceData } from './reference-repo.ts';
import { type Pairing, PairingError } from './terminal-data.ts';
import { readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

export interface PairingDeps {
  db: TerminalDatabase;
  bridge: TerminalBridge;
  api: DeviceApi;
  now: () => Date;
}

export interface PairingChange {
  pairing: Pairing | null;
  /** Unsent items of an earlier pairing that became errors (they can never be sent). */
  stranded: number;
}

async function refuseWhileQueued(db: TerminalDatabase, doing: string): Promise<void> {
  const [current, revoked] = await Promise.all([readKv(db, 'pairing'), readKv(db, 'revoked')]);
  if (!current || revoked) return;
  const waiting = await queueStats(db, current.deviceId);
  if (waiting.depth > 0) {
    throw new PairingError(
      'QUEUE_NOT_EMPTY',
      `${waiting.depth} item(s) are not forwarded yet: sync (or discard) them before ${doing}`,
    );
  }
}

function pairingFailure(err: unknown, url: string): unknown {
  if (!(err instanceof DeviceApiError)) return err;
  if (err.failure === 'network' || err.failure === 'timeout') {
    return new PairingError('UNREACHABLE', `The server at ${url} cannot be reached: ${err.message}`);
  }
  if (err.status === 400 || err.status === 404) return new PairingError('PAIRING_CODE_INVALID', err.message);
  return new PairingError('SERVER_ERROR', err.message);
}

/**
 * Redeems a pairing code. The check that nothing waits comes before the server is asked: a code
 * works once, and must not be spent on a pairing that is then refused.
 */
export async function pairDevice(
  deps: PairingDeps,
  serverUrl: string,
  pairingCode: string,
  deviceName: string | null,
): Promise<PairingChange> {
  const { db, bridge } = deps;
  const url = normaliseServerUrl(serverUrl);
  await refuseWhileQueued(db, 'pairing again');
  const appVersion = await bridge.appVersion().catch(() => null);
  const name = deviceName?.trim() || null;
  let answer: Awaited<ReturnType<DeviceApi['pair']>>;
  try {
    answer = await deps.api.pair(url, { pairingCode, deviceName: name, appVersion });
  } catch (err) {
    throw pairingFailure(err, url);
  }
  const credential = await protectCredential(answer.credential, answer.deviceId, bridge);
  const pairing: Pairing = {
    serverUrl: url,
    deviceId: answer.deviceId,
    settings: answer.settings,
    encryptionKey: answer.encryptionKey,
    pairedAt: deps.now().toISOString(),
  };
  await db.transaction('rw', [db.kv, db.campaigns, db.reasons, db.collectors, db.donors], async () => {
    await clearReferenceData(db);
    await db.kv.bulkDelete(['revoked', 'syncState']);
    await writeKv(db, 'pairing', pairing);
    await writeKv(db, 'credential', credential);
    if (name) {
      const local = await readLocalSettings(db);
      await writeKv(db, 'localSettings', mergeLocalSettings(local, { deviceName: name }));
    }
    await applyPullPage(db, answer.pull);
  });
  const stranded = await failUnsendable(db, answer.deviceId, {
    errorCode: 'DEVICE_PAIRED_AGAIN',
    message: 'Not forwarded: the device was paired again before this was sent. Take it again.',
  });
  return { pairing: (await readKv(db, 'pairing')) ?? pairing, stranded };
}

/** Forgets the pairing, the credential and the reference data; the outbox stays as a record. */
export async function unpairDevice(deps: Pick<PairingDeps, 'db'>): Promise<PairingChange> {
  const { db } = deps;
  if (!(await readKv(db, 'pairing'))) return { pairing: null, stranded: 0 };
  await refuseWhileQueued(db, 'unpairing');
  await db.transaction('rw', [db.kv, db.campaigns, db.reasons, db.collectors, db.donors], async () => {
    await clearReferenceData(db);
    await db.kv.bulkDelete(['pairing', 'credential', 'revoked', 'syncState']);
  });
  const stranded = await failUnsendable(db, null, {
    errorCode: 'DEVICE_UNPAIRED',
    message: 'Not forwarded: the device was unpaired before this was sent. Take it again.',
  });
  return { pairing: null, stranded };
}
