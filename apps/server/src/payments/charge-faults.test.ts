/**
 * The money path under SIGKILL: a real server process charges bursts of External API Charges and
 * device pushes and is killed at a random moment while they are in flight, twenty times over,
 * with some ids sent again in later rounds (a client retrying after an error or a lost answer).
 * The sandbox gateway keeps a journal of what it charged across the kills, as a real gateway
 * does. After the last restart every id is sent once more (and again while the answer is "nothing
 * was charged, send it again") and recovery resolves what was left Pending. Then:
 * - no id was charged at the gateway more than once;
 * - every charge the gateway approved has exactly one Success payment and one payment webhook
 *   event; nothing is recorded Success that the gateway did not approve; nothing is Pending;
 * - every answer a client got (the last re-send answers a final outcome for every id) agrees with
 *   what the database holds.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChargeResponse, OpResult, PushResponse, SyncOperation } from '@kupah/contracts';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import type { CreatedOrg } from '../admin/admin-service.ts';
import { openDatabase } from '../db/database.ts';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import { PG_URL, type Reply, testDatabases } from '../testing/harness.ts';
import { adminPortFor, restartablePort, startServerProcess } from '../testing/server-process.ts';

const ADMIN = 'charge-faults-admin-token-0123456789';
/** Kill-and-restart rounds per database; CHARGE_FAULT_ROUNDS=20 is the heavier run it had before. */
const ROUNDS = Number(process.env.CHARGE_FAULT_ROUNDS ?? 12);
/** New ids per round: External API Charges, and device pushes of a few operations each. */
const NEW_EXTERNAL = 6;
const PUSHES = 2;
const OPS_PER_PUSH = 3;
/** Ids of earlier rounds sent again per round (per way in). */
const RETRIES = 4;

type Outcome = 'Success' | 'Declined' | 'Error';
const CARDS: Record<Outcome, string> = {
  Success: '4242424242424242',
  Declined: '4000000000000002',
  Error: '4000000000000119',
};
/** Error codes that are not an outcome: the client is to send the same id again later. */
const NOT_FINAL = new Set([
  'PAYMENT_PENDING',
  'REQUEST_IN_PROGRESS',
  'GATEWAY_UNAVAILABLE',
  'RATE_LIMITED',
  'INTERNAL',
]);

interface Item {
  id: string;
  via: 'external' | 'device';
  /** What the sandbox answers for its card. */
  card: Outcome;
  body?: Record<string, unknown>;
  op?: SyncOperation;
}

/** One answer a client got for an id (`lost`: the connection broke, no answer). */
interface Answer {
  round: number;
  lost: boolean;
  httpStatus: number;
  status: string | null;
  code: string | null;
  receiptNum: string | null;
  final: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(await testDatabases())('SIGKILL on the money path on %s', { timeout: 240_000 }, (kind) => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-charge-faults-'));
  const dataDir = join(dir, 'data');
  const journal = join(dir, 'gateway-journal');
  const database = `kupah_charge_faults_${randomBytes(4).toString('hex')}`;
  const adminDb = PG_URL.replace(/\/[^/]*$/, '/postgres');
  const dbUrl = PG_URL.replace(/\/[^/]*$/, `/${database}`);
  /** Every server process this suite started: none may outlive it. */
  const children: ChildProcess[] = [];
  /** Set once the suite is over: a test body still running (timed out) starts nothing more. */
  let closed = false;
  let starting: Promise<unknown> | null = null;

  afterAll(async () => {
    closed = true;
    await starting?.catch(() => {});
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGKILL');
        await gone;
      }
    }
    rmSync(dir, { recursive: true, force: true });
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: adminDb });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
      await c.end();
    }
  }, 60_000);

  it('no id is charged twice, every approved charge is recorded once with its event, none stays Pending', async () => {
    const t0 = Date.now();
    if (kind === 'postgres') {
      const c = new pg.Client({ connectionString: adminDb });
      await c.connect();
      await c.query(`CREATE DATABASE ${database}`);
      await c.end();
    }
    const port = await restartablePort();
    const url = `http://127.0.0.1:${port}`;
    const env = {
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      SANDBOX_GATEWAY_LATENCY_MS: '300',
      SANDBOX_GATEWAY_JOURNAL: journal,
      GATEWAY_TIMEOUT_MS: '2000',
      GATEWAY_SETTLE_MS: '0',
      RECOVERY_POLL_MS: '100',
      WEBHOOK_DISPATCHER: '0',
      SCHEDULER: '0',
      DATA_DIR: dataDir,
      DATABASE_URL: kind === 'postgres' ? dbUrl : '',
    };
    let child: ChildProcess;
    let output: () => string = () => '';
    const start = async () => {
      if (closed) throw new Error('the suite is over');
      const starts = startServerProcess(port, env);
      starting = starts;
      const s = await starts;
      children.push(s.child);
      if (closed) {
        s.child.kill('SIGKILL');
        throw new Error('the suite is over');
      }
      child = s.child;
      output = s.output;
    };
    /** Processes that exited before the test stopped them (a crash is a finding too). */
    const crashes: string[] = [];
    const stop = async (signal: NodeJS.Signals): Promise<number | null> => {
      if (child.exitCode !== null || child.signalCode !== null) {
        crashes.push(`exited on its own (${child.exitCode ?? child.signalCode}):\n${output().slice(-2000)}`);
        return child.exitCode;
      }
      const gone = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
      child.kill(signal);
      return gone;
    };

    const request = async (
      method: string,
      path: string,
      body?: unknown,
      headers: Record<string, string> = {},
    ): Promise<Reply> => {
      const base = path.startsWith('/admin/') ? `http://127.0.0.1:${adminPortFor(port)}` : url;
      const r = await fetch(`${base}${path}`, {
        method,
        signal: AbortSignal.timeout(30_000),
        headers: { 'content-type': 'application/json', ...headers },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : null;
      } catch {}
      return { status: r.status, body: parsed, headers: r.headers };
    };
    const admin = (method: string, path: string, body?: unknown) =>
      request(method, `/admin${path}`, body, { authorization: `Bearer ${ADMIN}` });

    await start();
    const startedIn = Date.now() - t0;
    const created = await admin('POST', '/orgs', { name: 'Charge faults' });
    expect(created.status).toBe(201);
    const org = created.body as CreatedOrg;
    const settings = await admin('PATCH', `/orgs/${org.orgGuid}/settings`, {
      webhooksAllSources: true,
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
    expect(settings.status).toBe(200);
    // The org's own source is a sandbox source of kind external (External API, Authorization: guid).
    const source = org.sourceGuid;
    const device: TestDevice = await pairTestDevice({ admin, org, request }, 'Fault kiosk');

    // ---------------------------------------------------------------------------------------
    // The ids, and every answer a client got for each.
    const items: Item[] = [];
    const byId = new Map<string, Item>();
    const answers = new Map<string, Answer[]>();
    let serial = 0;
    const cardFor = (): Outcome => {
      const n = serial++;
      return n % 9 === 4 ? 'Declined' : n % 13 === 7 ? 'Error' : 'Success';
    };
    const chargeFields = (card: Outcome) => ({
      amount: 18,
      currency: 'USD',
      paymentMethodId: 'Credit_Card',
      card: { ccNum: CARDS[card], expiry: '12/30', cvv: '123' },
    });
    const newExternal = (): Item => {
      const card = cardFor();
      const id = randomUUID();
      const item: Item = {
        id,
        via: 'external',
        card,
        body: { orgGUID: org.orgGuid, uniqueTransactionId: id, ...chargeFields(card) },
      };
      items.push(item);
      byId.set(id, item);
      return item;
    };
    const newDeviceOp = async (): Promise<Item> => {
      const card = cardFor();
      const op = await sealedOp(device, 'charge', chargeFields(card));
      const item: Item = { id: op.opId, via: 'device', card, op };
      items.push(item);
      byId.set(op.opId, item);
      return item;
    };
    const note = (id: string, a: Answer) => {
      const list = answers.get(id) ?? [];
      list.push(a);
      answers.set(id, list);
    };
    const lost = (round: number): Answer => ({
      round,
      lost: true,
      httpStatus: 0,
      status: null,
      code: null,
      receiptNum: null,
      final: false,
    });

    /** Send one External API Charge; resolves (never rejects) once it is answered or lost. */
    const sendExternal = async (item: Item, round: number, onAnswer: () => void) => {
      try {
        const r = await request('POST', '/v1/External/Charge', item.body, { authorization: source });
        onAnswer();
        // A Charge answer (200), or an error body: { error: { errorCode, message } }.
        const b = (r.body ?? {}) as Partial<ChargeResponse>;
        const status = r.status === 200 ? (b.paymentStatus ?? null) : null;
        const code = b.error?.errorCode ?? null;
        note(item.id, {
          round,
          lost: false,
          httpStatus: r.status,
          status,
          code,
          receiptNum: b.receiptNum ?? null,
          final:
            r.status === 200 &&
            (status === 'Success' || status === 'Declined' || (status === 'Error' && !NOT_FINAL.has(code!))),
        });
      } catch {
        note(item.id, lost(round));
      }
    };
    /** Push operations from the device; resolves once answered or lost. */
    const sendPush = async (batch: Item[], round: number, onAnswer: () => void) => {
      try {
        const r = await device.push(batch.map((i) => i.op!));
        onAnswer();
        const results: OpResult[] = r.status === 200 ? (r.body as PushResponse).results : [];
        const refused: string | null = r.status === 200 ? null : (r.body?.error?.errorCode ?? null);
        for (const item of batch) {
          const res = results.find((x) => x.opId === item.id);
          note(item.id, {
            round,
            lost: false,
            httpStatus: r.status,
            status: res?.status ?? null,
            code: res ? (res.error?.errorCode ?? null) : refused,
            receiptNum: res?.receiptNum ?? null,
            final: res !== undefined && res.retryable === false,
          });
        }
      } catch {
        for (const item of batch) note(item.id, lost(round));
      }
    };
    const lastFinal = (id: string) => answers.get(id)?.at(-1)?.final === true;
    const pick = <T>(from: T[], n: number): T[] => {
      const copy = [...from];
      const out: T[] = [];
      while (out.length < n && copy.length > 0)
        out.push(copy.splice(Math.floor(Math.random() * copy.length), 1)[0]!);
      return out;
    };

    // ---------------------------------------------------------------------------------------
    // Twenty bursts, each cut by SIGKILL while charges are in flight.
    const roundLog: string[] = [];
    const restarts: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      const earlier = [...items];
      // A client sends again what got no final answer; now and then also one that did (a replay).
      const retry = (via: Item['via']) => {
        const mine = earlier.filter((i) => i.via === via);
        const open = pick(
          mine.filter((i) => !lastFinal(i.id)),
          RETRIES,
        );
        const replay = pick(
          mine.filter((i) => lastFinal(i.id)),
          1,
        );
        return [...open, ...replay];
      };
      const retried = retry('external');
      const fresh = Array.from({ length: NEW_EXTERNAL }, newExternal);
      const batches: Item[][] = [];
      for (let p = 0; p < PUSHES; p++) {
        const batch: Item[] = [];
        for (let k = 0; k < OPS_PER_PUSH; k++) batch.push(await newDeviceOp());
        batches.push(batch);
      }
      batches[0]!.push(...retry('device'));

      // Answers of requests with new ids (a replay answers at once, before any charge is through).
      let answered = 0;
      const onAnswer = () => {
        answered++;
      };
      const noop = () => {};
      const roundStart = Date.now();
      // Each request leaves at its own moment within 250 ms, so that when the kill comes some are
      // not claimed yet, some are at the gateway, some charged but not recorded, some recorded.
      const jittered = async (send: () => Promise<void>) => {
        await sleep(Math.floor(Math.random() * 250));
        await send();
      };
      const inFlight = [
        ...retried.map((i) => jittered(() => sendExternal(i, round, noop))),
        ...fresh.map((i) => jittered(() => sendExternal(i, round, onAnswer))),
        ...batches.map((b) => jittered(() => sendPush(b, round, onAnswer))),
      ];
      // Kill once the first answers of the round are in (a fresh process is slow to answer its
      // first requests), then at a random moment within the next 300 ms.
      for (let i = 0; i < 500 && answered < 2; i++) await sleep(10);
      const firstAnswers = Date.now() - roundStart;
      const delay = Math.floor(Math.random() * 300);
      await sleep(delay);
      const answeredBeforeKill = answered;
      await stop('SIGKILL');
      await Promise.all(inFlight);
      const restart = Date.now();
      await start();
      restarts.push(Date.now() - restart);
      roundLog.push(
        `round ${round} at ${restart - t0} ms (restart ${Date.now() - restart} ms): ${fresh.length}+${retried.length} charges + ${batches.map((b) => b.length).join('+')} ops; ` +
          `first answers after ${firstAnswers} ms, killed ${delay} ms later with ${answeredBeforeKill}/${inFlight.length} answered`,
      );
      if (process.env.CHARGE_FAULTS_VERBOSE) console.log(roundLog.at(-1));
    }
    const roundsDone = Date.now() - t0;

    // ---------------------------------------------------------------------------------------
    // After the last restart: every id once more (a client retries after a lost answer), then wait
    // until recovery has resolved everything left Pending. An answer that says "nothing was
    // charged, send it again" (GATEWAY_UNAVAILABLE: recovery released a claim the gateway never
    // saw; REQUEST_IN_PROGRESS) is sent again, as a client would; PAYMENT_PENDING is not.
    const FINAL = ROUNDS;
    const finalExternal = items.filter((i) => i.via === 'external');
    const finalOps = items.filter((i) => i.via === 'device');
    const sendAgain = (i: Item) => {
      const a = answers.get(i.id)!.at(-1)!;
      return !a.final && a.code !== 'PAYMENT_PENDING';
    };
    let finalRetries = 0;
    for (let attempt = 0, todo = items; attempt < 4 && todo.length > 0; attempt++) {
      if (attempt > 0) {
        finalRetries += todo.length;
        await sleep(500);
      }
      const queue = todo.filter((i) => i.via === 'external');
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let item = queue.shift(); item; item = queue.shift())
            await sendExternal(item, FINAL, () => {});
        }),
      );
      const ops = todo.filter((i) => i.via === 'device');
      for (let i = 0; i < ops.length; i += 20) await sendPush(ops.slice(i, i + 20), FINAL, () => {});
      todo = items.filter(sendAgain);
    }
    const resent = Date.now() - t0;

    const pendingCount = async (): Promise<number> => {
      if (kind === 'postgres') {
        const c = new pg.Client({ connectionString: dbUrl });
        await c.connect();
        try {
          const { rows } = await c.query(`SELECT count(*)::int AS n FROM payments WHERE status = 'Pending'`);
          return Number(rows[0].n);
        } finally {
          await c.end();
        }
      }
      const r = await admin('GET', `/orgs/${org.orgGuid}/payments/pending`);
      return Number(r.body.count);
    };
    const deadline = Date.now() + 60_000;
    let pending = await pendingCount();
    while (pending > 0 && Date.now() < deadline) {
      await sleep(200);
      pending = await pendingCount();
    }
    const settled = Date.now() - t0;
    const lastOutput = output();
    const stoppedWith = await stop('SIGTERM');

    // ---------------------------------------------------------------------------------------
    // What the gateway charged (its journal) and what the database holds.
    const lines = existsSync(journal) ? readFileSync(journal, 'utf8').split('\n') : [];
    const charges = new Map<string, { status: string; gatewayRef: string | null }[]>();
    const malformed: string[] = [];
    for (const line of lines) {
      if (line === '') continue;
      const tab = line.indexOf('\t');
      if (tab < 0) {
        malformed.push(line);
        continue;
      }
      const key = line.slice(0, tab);
      if (!key.startsWith('auth:')) continue;
      let result: { status: string; gatewayRef: string | null };
      try {
        result = JSON.parse(line.slice(tab + 1));
      } catch {
        malformed.push(line);
        continue;
      }
      const list = charges.get(key.slice('auth:'.length)) ?? [];
      list.push(result);
      charges.set(key.slice('auth:'.length), list);
    }
    const keyOf = (id: string) => `${org.orgGuid}:${id}`;

    if (closed) throw new Error('the suite is over');
    const db = await openDatabase(kind === 'postgres' ? { url: dbUrl, poolSize: 2 } : { dataDir });
    let rows: {
      uid: string;
      status: string;
      receipt_num: string;
      gateway_ref: string | null;
      error_code: string | null;
      recovery_attempts: number;
    }[];
    let events: { paymentNumber: string }[];
    let allPending: number;
    try {
      rows = await db.query(
        `SELECT p.unique_transaction_id AS uid, p.status, p.receipt_num, p.gateway_ref, p.error_code,
                p.recovery_attempts FROM payments p JOIN orgs o ON o.id = p.org_id WHERE o.guid = $1 ORDER BY p.id`,
        [org.orgGuid],
      );
      events = (
        await db.query<{ payload: string }>(
          `SELECT e.payload FROM outbox_events e JOIN orgs o ON o.id = e.org_id
            WHERE o.guid = $1 AND e.event_type = 'payment' ORDER BY e.id`,
          [org.orgGuid],
        )
      ).map((e) => JSON.parse(e.payload) as { paymentNumber: string });
      allPending = Number(
        (
          await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM payments WHERE status = 'Pending'`)
        )[0]!.n,
      );
    } finally {
      await db.close();
    }
    const rowsOf = new Map<string, typeof rows>();
    for (const r of rows) rowsOf.set(r.uid, [...(rowsOf.get(r.uid) ?? []), r]);
    const eventsOf = new Map<string, number>();
    for (const e of events) eventsOf.set(e.paymentNumber, (eventsOf.get(e.paymentNumber) ?? 0) + 1);

    const problems: string[] = [...crashes];
    // (1) Every id charged at the gateway at most once; the journal holds only our ids.
    for (const [key, list] of charges) {
      if (list.length > 1)
        problems.push(`charged ${list.length} times at the gateway: ${key} ${JSON.stringify(list)}`);
      if (!key.startsWith(`${org.orgGuid}:`) || !byId.has(key.slice(org.orgGuid.length + 1)))
        problems.push(`the gateway charged an unknown key ${key}`);
    }
    for (const line of malformed) problems.push(`journal line cut short: ${JSON.stringify(line)}`);
    for (const item of items) {
      const charged = charges.get(keyOf(item.id))?.[0];
      const mine = rowsOf.get(item.id) ?? [];
      if (mine.length > 1)
        problems.push(`${mine.length} payment rows for ${item.id}: ${JSON.stringify(mine)}`);
      const row = mine[0];
      if (charged) {
        if (charged.status !== item.card)
          problems.push(`${item.id}: gateway answered ${charged.status} for a ${item.card} card`);
        // (2) Approved at the gateway: exactly one Success row, exactly one payment event for it.
        if (charged.status === 'Success') {
          const ok = mine.filter((r) => r.status === 'Success');
          if (ok.length !== 1)
            problems.push(
              `approved at the gateway but ${ok.length} Success rows: ${item.id} ${JSON.stringify(mine)}`,
            );
          else {
            if (ok[0]!.gateway_ref !== charged.gatewayRef)
              problems.push(
                `${item.id}: recorded ${ok[0]!.gateway_ref}, gateway charged ${charged.gatewayRef}`,
              );
            const n = eventsOf.get(ok[0]!.receipt_num) ?? 0;
            if (n !== 1) problems.push(`${item.id} (${ok[0]!.receipt_num}): ${n} payment events`);
          }
        } else if (row?.status !== charged.status) {
          problems.push(
            `${item.id}: gateway answered ${charged.status}, recorded ${JSON.stringify(row ?? null)}`,
          );
        }
      } else if (row && !(row.status === 'Error' && row.error_code === 'PAYMENT_NOT_COMPLETED')) {
        // (4) Nothing recorded as charged (or declined) that the gateway never saw.
        problems.push(`${item.id}: never reached the gateway, recorded ${JSON.stringify(row)}`);
      }
      // (5) The last re-send answered a final outcome, the one the database holds; and every
      // final answer the client got along the way agrees with it too.
      const seen = answers.get(item.id) ?? [];
      const last = seen.at(-1);
      if (!last || last.round !== FINAL || !last.final) {
        problems.push(
          `${item.id} (${item.via}): the last re-send answered no outcome: ${JSON.stringify(last)}`,
        );
      }
      for (const a of seen.filter((x) => x.final)) {
        const where = `${item.id} (${item.via}, round ${a.round})`;
        if (!row) {
          problems.push(`${where}: answered ${a.status} ${a.code ?? ''} but no payment row`);
        } else if (a.status !== row.status) {
          problems.push(`${where}: answered ${a.status} ${a.code ?? ''}, recorded ${row.status}`);
        } else if (a.status === 'Success' && a.receiptNum !== row.receipt_num) {
          problems.push(`${where}: answered receipt ${a.receiptNum}, recorded ${row.receipt_num}`);
        } else if (a.status === 'Error' && a.code !== row.error_code) {
          problems.push(`${where}: answered ${a.code}, recorded ${row.error_code}`);
        }
      }
    }
    // (4) No Success row without the gateway's approval of its key; no payment event for anything else.
    for (const r of rows) {
      if (r.status === 'Success' && charges.get(keyOf(r.uid))?.[0]?.status !== 'Success')
        problems.push(`Success without the gateway's approval: ${JSON.stringify(r)}`);
      if (!byId.has(r.uid)) problems.push(`a payment for an id never sent: ${JSON.stringify(r)}`);
    }
    const successReceipts = new Set(rows.filter((r) => r.status === 'Success').map((r) => r.receipt_num));
    for (const e of events) {
      if (!successReceipts.has(e.paymentNumber))
        problems.push(`payment event for ${e.paymentNumber}: not a Success`);
    }

    const approved = [...charges.values()].filter((l) => l[0]?.status === 'Success').length;
    const recovered = rows.filter((r) => Number(r.recovery_attempts) > 0);
    const recoveredOk = recovered.filter((r) => r.status === 'Success').length;
    const notCompleted = rows.filter((r) => r.error_code === 'PAYMENT_NOT_COMPLETED').length;
    const all = [...answers.values()].flat();
    const open = all.filter((a) => !a.lost && !a.final);
    const summary = [
      `${kind}: ${items.length} ids (${finalExternal.length} External Charges, ${finalOps.length} device ops); ` +
        `${charges.size} charged at the gateway (${approved} approved); ${rows.length} payments, ` +
        `${recovered.length} resolved by recovery (${recoveredOk} Success), ${notCompleted} not completed; ` +
        `${events.length} payment events`,
      `answers: ${all.length} (${finalRetries} sent again after the final re-send), ` +
        `${all.filter((a) => a.lost).length} lost to a kill, ${open.length} not final` +
        (open.length ? ` (${[...new Set(open.map((a) => `${a.httpStatus} ${a.code}`))].join(', ')})` : ''),
      `times: first start ${startedIn} ms, restarts ${Math.min(...restarts)}–${Math.max(...restarts)} ms, ` +
        `rounds done ${roundsDone} ms, re-sent ${resent} ms, settled ${settled} ms; pending ${pending}/${allPending}; SIGTERM exit ${stoppedWith}`,
    ];
    console.log([...summary, ...(process.env.CHARGE_FAULTS_VERBOSE ? roundLog : [])].join('\n'));
    if (problems.length > 0) {
      console.error(
        [...problems.slice(0, 40), ...roundLog, '--- last server output ---', lastOutput.slice(-4000)].join(
          '\n',
        ),
      );
    }
    expect(problems).toEqual([]);
    expect(pending).toBe(0);
    expect(allPending).toBe(0);
    expect(approved).toBeGreaterThan(0);
    expect(rows.filter((r) => r.status === 'Declined').length).toBeGreaterThan(0);
  });
});
