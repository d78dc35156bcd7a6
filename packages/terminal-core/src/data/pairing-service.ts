/**
 * Pairing a terminal with a server (a one-time code buys the device id, its credential, the
 * organisation's settings, the envelope key and the first reference data) and unpairing it.
 * Neither may strand money: both are refused while items of the current pairing wait to be
 * forwarded, unless the server has revoked the device (then nothing can be forwarded anyway).
 *
 * Transport: the server address must be `https://`; plain `http://` only on this machine
 * (localhost, 127.0.0.0/8, ::1), or from the development server run with VITE_ALLOW_INSECURE_SERVER=1.
 *
 * Key pinning: pairing pins the server's signing key (in the pairing answer) and checks the
 * envelope key against it; afterwards `envelopeKeyGuard` lets the sync loop adopt a new envelope
 * key only when it is signed by that pinned key. An on-path attacker cannot swap in its own key.
 */
import type { EnvelopeKey, TerminalBridge } from '@kupah/contracts';
import { type SigningPublicJwk, verifyEnvelopeKey } from '@kupah/envelope';
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

/**
 * The development server (or a development-mode build) with `VITE_ALLOW_INSECURE_SERVER=1`: plain
 * HTTP to any host. A production build (`import.meta.env.DEV` false) never allows it, whatever
 * its environment or `.env` files say.
 */
const buildEnv = (import.meta as { env?: Record<string, string | boolean | undefined> }).env;
export const ALLOW_INSECURE_SERVER = buildEnv?.DEV === true && buildEnv.VITE_ALLOW_INSECURE_SERVER === '1';

/** This machine: plain HTTP to it never crosses a network. */
function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host === '::1') return true;
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return v4 !== null && Number(v4[1]) === 127;
}

/**
 * Why the terminal will not pair with this address (null: it will). Card data is sealed, but the
 * credential, donors' details and the envelope key travel with every request: not over plain HTTP.
 */
export function insecureServerUrl(url: string, allowInsecure = ALLOW_INSECURE_SERVER): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'The server address is not a URL';
  }
  if (u.protocol === 'https:') return null;
  if (u.protocol !== 'http:') return 'The server address must start with https://';
  if (allowInsecure || isLoopbackHost(u.hostname)) return null;
  return 'The server address must start with https:// (plain http:// only to this machine)';
}

/** The server address is refused before anything is sent to it (see `insecureServerUrl`). */
export class InsecureServerUrlError extends PairingError {
  constructor(message: string) {
    super('SERVER_ERROR', message);
    this.name = 'InsecureServerUrlError';
  }
}

const sameKey = (a: EnvelopeKey, b: EnvelopeKey) =>
  a.kid === b.kid && a.jwk.x === b.jwk.x && a.jwk.y === b.jwk.y;

/** What the sync loop asks before it stores an envelope key a server answer carries. */
export interface EnvelopeKeyGuard {
  /**
   * `accepted`: the key is the one held, or signed for this organisation by the pinned signing key;
   * `key` is then the key to store. Otherwise `key` is the key held (kept) and the answer's is refused.
   * `offered`: a signing key a pull answer carries, pinned only when none is (see below).
   */
  check(key: EnvelopeKey, offered?: SigningPublicJwk): Promise<{ accepted: boolean; key: EnvelopeKey }>;
}

/**
 * Checks envelope keys against the signing key pinned when this device was paired. A device paired
 * before envelope keys were signed has no pin: it pins the signing key the server offers in a pull
 * answer, once, and only from a server reached over https (or on this machine): the same trust its
 * pairing had. From then on every key must be signed by it.
 */
export function envelopeKeyGuard(db: TerminalDatabase): EnvelopeKeyGuard {
  return {
    async check(key, offered) {
      const [pairing, pin] = await Promise.all([readKv(db, 'pairing'), readKv(db, 'signingKey')]);
      if (!pairing) return { accepted: true, key };
      let pinned = pin && pin.deviceId === pairing.deviceId ? pin.jwk : null;
      if (!pinned && offered && insecureServerUrl(pairing.serverUrl) === null) {
        const jwk = { kty: offered.kty, crv: offered.crv, x: offered.x, y: offered.y };
        await writeKv(db, 'signingKey', { deviceId: pairing.deviceId, jwk });
        pinned = jwk;
      }
      if (sameKey(pairing.encryptionKey, key)) return { accepted: true, key };
      if (pinned && (await verifyEnvelopeKey(pinned, pairing.settings.orgGuid, key))) {
        return { accepted: true, key };
      }
      return { accepted: false, key: pairing.encryptionKey };
    },
  };
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
  const insecure = insecureServerUrl(url);
  if (insecure) throw new InsecureServerUrlError(insecure);
  await refuseWhileQueued(db, 'pairing again');
  const appVersion = await bridge.appVersion().catch(() => null);
  const name = deviceName?.trim() || null;
  let answer: Awaited<ReturnType<DeviceApi['pair']>>;
  try {
    answer = await deps.api.pair(url, { pairingCode, deviceName: name, appVersion });
  } catch (err) {
    throw pairingFailure(err, url);
  }
  // The signing key is pinned from this answer (over HTTPS); the keys it carries must verify under it.
  const orgGuid = answer.settings.orgGuid;
  const signed = await Promise.all(
    [answer.encryptionKey, answer.pull.encryptionKey].map((k) =>
      verifyEnvelopeKey(answer.signingKey, orgGuid, k),
    ),
  );
  if (signed.includes(false)) {
    throw new PairingError(
      'SERVER_ERROR',
      'The envelope key in the server’s answer is not signed by its signing key: not paired',
    );
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
    await writeKv(db, 'signingKey', { deviceId: answer.deviceId, jwk: answer.signingKey });
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
    await db.kv.bulkDelete(['pairing', 'credential', 'revoked', 'syncState', 'signingKey']);
  });
  const stranded = await failUnsendable(db, null, {
    errorCode: 'DEVICE_UNPAIRED',
    message: 'Not forwarded: the device was unpaired before this was sent. Take it again.',
  });
  return { pairing: null, stranded };
}
