/**
 * A small stand-in for the server's device-sync endpoints, as a `fetch` function, for the unit
 * tests of the data layer and the sync loop. It speaks the contract (pair, push, pull; 401, 403
 * DEVICE_REVOKED; replays by opId) and opens every sealed box with the test's private key, so a
 * test sees exactly what a real server would receive. Faults are injected per request. The real
 * server is exercised by the integration and fault tests (e2e/).
 */
import type { DeviceReceiptSendRequest, ShiftCloseRequest } from '@kupah/contracts';
import {
  type DeviceSettings,
  type EnvelopeKey,
  type OpResult,
  type PullResponse,
  type PushRequest,
  pairRequest,
  pushRequest,
  type RefCampaign,
  type RefPerson,
  type RefReason,
  type SealedSecrets,
  type SyncOperation,
  sealAadV2,
} from '@kupah/contracts';
import {
  createOpener,
  type EnvelopePrivateJwk,
  generateEnvelopeKeyPair,
  generateSigningKeyPair,
  type SigningPublicJwk,
  signEnvelopeKey,
} from '@kupah/envelope';
import { TEST_CREDENTIAL, testSettings } from './fake-settings.ts';

export { TEST_CREDENTIAL, TEST_ORG_GUID, testSettings } from './fake-settings.ts';

/** What the fake does with a request instead of answering it normally. */
export type Fault =
  | 'network'
  | 'timeout'
  /** Processed, then the connection drops before the answer arrives. */
  | 'answerLost'
  | {
      status: number;
      errorCode?: string;
      message?: string;
      fields?: { field: string; message: string }[];
      retryAfter?: string;
    };

export type Route = 'pair' | 'push' | 'pull' | 'shift' | 'receipt';

/** The server's verdict on one operation (it may look at the opened secrets). */
export type Decide = (
  op: SyncOperation,
  secrets: SealedSecrets | null,
) => Pick<OpResult, 'status' | 'retryable'> & Partial<Pick<OpResult, 'error' | 'receiptNum' | 'scheduleNum'>>;

const DECLINED_CARD = '4000000000000002';

const defaultDecide: Decide = (_op, secrets) =>
  secrets?.card?.ccNum?.replace(/\D/g, '') === DECLINED_CARD
    ? {
        status: 'Declined',
        retryable: false,
        error: { errorCode: 'CARD_DECLINED', message: 'Card declined' },
      }
    : { status: 'Success', retryable: false };

export interface FakeDeviceServer {
  url: string;
  fetch: typeof fetch;
  key: EnvelopeKey;
  deviceId: string;
  settings: DeviceSettings;
  pairingCode: string;
  /** Every operation received, in order (replays included). */
  received: SyncOperation[];
  /** The push bodies received. */
  pushes: PushRequest[];
  /** Opened secrets per opId. */
  opened: Map<string, SealedSecrets | null>;
  /** Final answers per opId (what a replay gets). */
  answers: Map<string, OpResult>;
  /** Reference data served by pull (all in the first page unless `pages` is set). */
  reference: { campaigns: RefCampaign[]; reasons: RefReason[]; collectors: RefPerson[]; donors: RefPerson[] };
  /** The organisation's contact key sent with every pull page (the HMAC key of `contactHashes`). */
  contactKey: string | null;
  /** Split the reference data over this many pull pages. */
  pages: number;
  revoked: boolean;
  decide: Decide;
  /** Faults for the next requests of a route (consumed in order). */
  faults: Record<Route, Fault[]>;
  /** Shift closes recorded (the fake answers the device's totals back, without what was queued). */
  shiftCloses: ShiftCloseRequest[];
  /** Receipts asked for on their own (`POST /v1/Device/Receipt/Send`), in order. */
  receiptSends: DeviceReceiptSendRequest[];
  /** Called when a push arrives, before it is answered (tests hold it open with a promise). */
  onPush: ((body: PushRequest) => Promise<void> | void) | null;
  /** Number of pushes being answered right now, and the most there ever were at once. */
  concurrency: { now: number; max: number };
  /** A new envelope key (a rotation), signed: the next answers carry it; the old one still opens. */
  rotateKey(): Promise<EnvelopeKey>;
  /** The public signing key the pairing answer carries (the terminal pins it). */
  signingKey: SigningPublicJwk;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

const errorBody = (errorCode: string, message: string, fields?: { field: string; message: string }[]) => ({
  error: { errorCode, message, ...(fields ? { fields } : {}) },
});

export async function createFakeDeviceServer(
  opts: { settings?: Partial<DeviceSettings>; deviceId?: string } = {},
): Promise<FakeDeviceServer> {
  const keys: { kid: string; privateJwk: EnvelopePrivateJwk }[] = [];
  const signing = await generateSigningKeyPair();
  const settings = testSettings(opts.settings);
  const newKey = async (): Promise<EnvelopeKey> => {
    const pair = await generateEnvelopeKeyPair();
    keys.push({ kid: pair.kid, privateJwk: pair.privateJwk });
    const key = { kid: pair.kid, jwk: pair.publicJwk };
    return { ...key, sig: await signEnvelopeKey(signing.privateJwk, settings.orgGuid, key) };
  };
  let receiptSeq = 1000;
  let paired = false;

  const server: FakeDeviceServer = {
    url: 'https://kupah.test',
    fetch: null as unknown as typeof fetch,
    key: await newKey(),
    deviceId: opts.deviceId ?? 'dev_test000001',
    settings,
    signingKey: signing.publicJwk,
    pairingCode: 'ABCD-EFGH',
    received: [],
    pushes: [],
    opened: new Map(),
    answers: new Map(),
    reference: { campaigns: [], reasons: [], collectors: [], donors: [] },
    contactKey: null,
    pages: 1,
    revoked: false,
    decide: defaultDecide,
    faults: { pair: [], push: [], pull: [], shift: [], receipt: [] },
    shiftCloses: [],
    receiptSends: [],
    onPush: null,
    concurrency: { now: 0, max: 0 },
    async rotateKey() {
      server.key = await newKey();
      return server.key;
    },
  };

  function page(cursor: string | null, limit: number): PullResponse {
    const all = [
      ...server.reference.campaigns.map((c) => ({ t: 'campaigns' as const, v: c })),
      ...server.reference.reasons.map((r) => ({ t: 'reasons' as const, v: r })),
      ...server.reference.collectors.map((c) => ({ t: 'collectors' as const, v: c })),
      ...server.reference.donors.map((d) => ({ t: 'donors' as const, v: d })),
    ];
    const from = cursor ? Number(cursor) : 0;
    const size = Math.min(limit, Math.max(1, Math.ceil(all.length / server.pages)));
    const slice = all.slice(from, from + size);
    const pick = <T extends 'campaigns' | 'reasons' | 'collectors' | 'donors'>(t: T) =>
      slice.filter((e) => e.t === t).map((e) => e.v) as PullResponse[T];
    return {
      cursor: String(from + slice.length),
      more: from + slice.length < all.length,
      settings: server.settings,
      encryptionKey: server.key,
      campaigns: pick('campaigns'),
      reasons: pick('reasons'),
      collectors: pick('collectors'),
      donors: pick('donors'),
      ...(server.contactKey ? { contactKey: server.contactKey } : {}),
      signingKey: server.signingKey,
      serverTime: new Date().toISOString(),
    };
  }

  async function answer(op: SyncOperation): Promise<OpResult> {
    server.received.push(op);
    const stored = server.answers.get(op.opId);
    if (stored) return stored;
    let secrets: SealedSecrets | null = null;
    const blank = { opId: op.opId, kind: op.kind, receiptNum: null, scheduleNum: null, accountNum: null };
    if (op.sealed) {
      try {
        secrets = (await createOpener(keys).open(op.sealed, sealAadV2(server.deviceId, op))) as SealedSecrets;
      } catch {
        return {
          ...blank,
          status: 'Error',
          retryable: false,
          error: { errorCode: 'ENVELOPE_INVALID', message: 'The sealed data could not be opened' },
        };
      }
    }
    server.opened.set(op.opId, secrets);
    const verdict = server.decide(op, secrets);
    const result: OpResult = {
      ...blank,
      error: null,
      ...verdict,
      receiptNum:
        verdict.receiptNum !== undefined
          ? verdict.receiptNum
          : verdict.status === 'Success' && op.kind !== 'saveDonor'
            ? `R${receiptSeq++}`
            : null,
    };
    if (!result.retryable) server.answers.set(op.opId, result);
    return result;
  }

  async function handle(route: Route, req: Request): Promise<Response> {
    const fault = server.faults[route].shift();
    if (fault === 'network') throw new TypeError('fetch failed');
    if (fault === 'timeout') {
      // Never answers; the client's time limit aborts it.
      return new Promise<Response>((_resolve, reject) => {
        req.signal.addEventListener('abort', () => reject(new DOMException('aborted', 'AbortError')));
      });
    }
    if (fault && fault !== 'answerLost') {
      return json(
        fault.status,
        errorBody(fault.errorCode ?? 'INTERNAL_ERROR', fault.message ?? 'Injected fault', fault.fields),
        fault.retryAfter ? { 'retry-after': fault.retryAfter } : {},
      );
    }
    if (route === 'shift') {
      const body = (await req.json()) as ShiftCloseRequest;
      if (!server.shiftCloses.some((c) => c.closeId === body.closeId)) server.shiftCloses.push(body);
      const { queued: _queued, ...server_ } = body.totals;
      return json(200, { closeId: body.closeId, recordedAt: new Date().toISOString(), server: server_ });
    }
    if (route === 'pair') {
      const body = pairRequest.safeParse(await req.json());
      const code = body.success ? body.data.pairingCode.toUpperCase().replace(/[^A-Z0-9]/g, '') : '';
      if (paired || code !== server.pairingCode.replace('-', '')) {
        return json(
          400,
          errorBody('PAIRING_CODE_INVALID', 'The pairing code is unknown, already used or expired'),
        );
      }
      paired = true;
      const first = page(null, 500);
      return json(200, {
        deviceId: server.deviceId,
        credential: TEST_CREDENTIAL,
        settings: server.settings,
        encryptionKey: server.key,
        signingKey: server.signingKey,
        pull: first,
      });
    }
    if (req.headers.get('authorization') !== TEST_CREDENTIAL) {
      return json(401, errorBody('UNAUTHORIZED', 'The device credential is unknown'));
    }
    if (server.revoked) {
      return json(403, errorBody('DEVICE_REVOKED', 'This device was revoked by the organisation'));
    }
    if (route === 'receipt') {
      const body = (await req.json()) as DeviceReceiptSendRequest;
      // Like the server: only a payment this device took and the server answered.
      if (![...server.answers.values()].some((a) => a.receiptNum === body.receiptNum)) {
        return json(404, errorBody('NOT_FOUND', `No payment ${body.receiptNum} of this device`));
      }
      server.receiptSends.push(body);
      const at = new Date().toISOString();
      return json(200, {
        receiptNum: body.receiptNum,
        delivery: {
          deliveryId: server.receiptSends.length,
          kind: 'copy',
          receiptNum: body.receiptNum,
          donorId: null,
          year: null,
          email: body.email,
          language: body.language ?? 'en',
          status: 'pending',
          attempts: 0,
          lastError: null,
          createdAt: at,
          sentAt: null,
          nextAttemptAt: at,
        },
      });
    }
    if (route === 'pull') {
      const q = new URL(req.url).searchParams;
      return json(200, page(q.get('cursor'), Number(q.get('limit') ?? 500)));
    }
    const parsed = pushRequest.safeParse(await req.json());
    if (!parsed.success) {
      return json(400, errorBody('VALIDATION_FAILED', 'The push body is not valid'));
    }
    server.pushes.push(parsed.data);
    server.concurrency.now++;
    server.concurrency.max = Math.max(server.concurrency.max, server.concurrency.now);
    try {
      await server.onPush?.(parsed.data);
      const results: OpResult[] = [];
      for (const op of parsed.data.operations) results.push(await answer(op));
      if (fault === 'answerLost') throw new TypeError('fetch failed: connection reset');
      return json(200, { results, serverTime: new Date().toISOString(), encryptionKey: server.key });
    } finally {
      server.concurrency.now--;
    }
  }

  server.fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const path = new URL(req.url).pathname;
    const route: Route | null =
      path === '/v1/Device/Pair'
        ? 'pair'
        : path === '/v1/Device/Sync/Push'
          ? 'push'
          : path === '/v1/Device/Sync/Pull'
            ? 'pull'
            : path === '/v1/Device/Shift/Close'
              ? 'shift'
              : path === '/v1/Device/Receipt/Send'
                ? 'receipt'
                : null;
    if (!route) return json(404, errorBody('NOT_FOUND', `No route ${path}`));
    return handle(route, req);
  }) as typeof fetch;
  return server;
}
