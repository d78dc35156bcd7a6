/**
 * A minimal device for server tests: pairs through the real endpoint and builds push operations
 * the way the terminal does (secrets sealed under the server's key, bound to the device and the
 * operation's clear fields).
 */
import { randomUUID } from 'node:crypto';
import {
  type EnvelopeKey,
  type PairResponse,
  type SealedSecrets,
  type SyncOperation,
  sealAad,
  sealAadV2,
} from '@kupah/contracts';
import { createSealer } from '@kupah/envelope';
import type { Harness, Reply } from './harness.ts';

export interface TestDevice {
  deviceId: string;
  credential: string;
  key: EnvelopeKey;
  pairing: PairResponse;
  push(
    operations: SyncOperation[],
    queue?: { depth: number; totalMinor: number; byKid?: Record<string, number> },
  ): Promise<Reply>;
  pull(cursor?: string, limit?: number): Promise<Reply>;
}

type RequestFn = Harness['request'];

export async function pairTestDevice(
  h: Pick<Harness, 'admin' | 'org'> & { request: RequestFn },
  name = 'Kiosk 1',
  opts: { sandbox?: boolean } = {},
): Promise<TestDevice> {
  const created = await h.admin('POST', `/orgs/${h.org.orgGuid}/devices`, {
    name,
    sandbox: opts.sandbox ?? true,
  });
  if (created.status !== 201)
    throw new Error(`device create: ${created.status} ${JSON.stringify(created.body)}`);
  const paired = await h.request('POST', '/v1/Device/Pair', {
    pairingCode: created.body.pairingCode,
    appVersion: 'test-1.0',
  });
  if (paired.status !== 200) throw new Error(`pair: ${paired.status} ${JSON.stringify(paired.body)}`);
  const pairing = paired.body as PairResponse;
  const auth = { authorization: pairing.credential };
  return {
    deviceId: pairing.deviceId,
    credential: pairing.credential,
    key: pairing.encryptionKey,
    pairing,
    push: (operations, queue = { depth: operations.length, totalMinor: 0 }) =>
      h.request(
        'POST',
        '/v1/Device/Sync/Push',
        { deviceId: pairing.deviceId, appVersion: 'test-1.0', queue, operations },
        auth,
      ),
    pull: (cursor, limit) => {
      const q = new URLSearchParams();
      if (cursor) q.set('cursor', cursor);
      if (limit) q.set('limit', String(limit));
      return h.request('GET', `/v1/Device/Sync/Pull?${q}`, undefined, auth);
    },
  };
}

/** Split the clear secrets out of a request, as the terminal does before writing to its outbox. */
export function splitSecrets(request: Record<string, unknown>): {
  request: Record<string, unknown>;
  secrets: SealedSecrets | null;
} {
  const req = structuredClone(request);
  const card = req.card as Record<string, unknown> | undefined;
  const bank = req.bankAccount as Record<string, unknown> | undefined;
  const secrets: SealedSecrets = {};
  if (card && (card.ccNum || card.cvv)) {
    secrets.card = { ccNum: (card.ccNum as string) ?? null, cvv: (card.cvv as string) ?? null };
    delete card.ccNum;
    delete card.cvv;
  }
  if (bank && (bank.accountNum || bank.routingNum)) {
    secrets.bankAccount = {
      accountNum: (bank.accountNum as string) ?? null,
      routingNum: (bank.routingNum as string) ?? null,
    };
    delete bank.accountNum;
    delete bank.routingNum;
  }
  return { request: req, secrets: secrets.card || secrets.bankAccount ? secrets : null };
}

/**
 * A push operation of `kind` carrying `request`, its secrets sealed for `device` and bound to the
 * operation's clear fields (`sealAadV2`, as the terminal seals); `aad: 'v1'` seals as terminals of
 * the previous version did (device and opId only).
 */
export async function sealedOp(
  device: Pick<TestDevice, 'deviceId' | 'key'>,
  kind: SyncOperation['kind'],
  request: Record<string, unknown>,
  opts: { opId?: string; deviceCreatedDate?: string; offline?: boolean; aad?: 'v1' | 'v2' } = {},
): Promise<SyncOperation> {
  const opId = opts.opId ?? randomUUID();
  const { request: clear, secrets } = splitSecrets(request);
  if (kind === 'charge' || kind === 'schedule') clear.uniqueTransactionId = opId;
  const deviceCreatedDate = opts.deviceCreatedDate ?? new Date().toISOString();
  const op: SyncOperation = {
    opId,
    kind,
    deviceCreatedDate,
    request: clear,
    ...(opts.offline !== undefined ? { offline: opts.offline } : {}),
    sealed: null,
  };
  const aad = opts.aad === 'v1' ? sealAad(device.deviceId, opId) : sealAadV2(device.deviceId, op);
  op.sealed = secrets ? await createSealer(device.key).seal(secrets, aad) : null;
  return op;
}
