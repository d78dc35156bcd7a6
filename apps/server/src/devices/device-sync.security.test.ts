/**
 * Attacks on device push with the device's own credential: a sealed box moved onto other clear
 * fields, a box of the old (v1) form after its window, a lying clock, offline limits ignored by
 * a modified terminal, and a charged item pushed again after its idempotency record was purged.
 * Each test plays the attacker and checks that nothing is charged (no gateway call, no payment).
 */
import { randomUUID } from 'node:crypto';
import type { SyncOperation } from '@kupah/contracts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Gateway } from '../gateway/gateway.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import { createHarness, type Harness, testDatabases } from '../testing/harness.ts';
import { purgeOpsSeen } from './ops-seen.ts';

const HOUR = 3_600_000;

/** The sandbox gateway, counting the calls that could move money. */
function countingGateway() {
  const inner = sandboxGateway();
  const counts = { charges: 0 };
  const gateway: Gateway = Object.assign(Object.create(inner) as Gateway, {
    authorize: (...args: Parameters<Gateway['authorize']>) => {
      counts.charges++;
      return inner.authorize(...args);
    },
    tokenize: (...args: Parameters<Gateway['tokenize']>) => {
      counts.charges++;
      return inner.tokenize(...args);
    },
  });
  return { gateway, counts };
}

describe.each(await testDatabases())('device push attacks on %s', (kind) => {
  let h: Harness;
  let device: TestDevice;
  const { gateway, counts } = countingGateway();
  beforeAll(async () => {
    h = await createHarness(kind, { gateway });
    device = await pairTestDevice(h, 'Front desk');
  });
  afterAll(async () => {
    await h?.close();
  });

  const chargeReq = (over: Record<string, unknown> = {}) => ({
    amount: 18,
    currency: 'USD',
    paymentMethodId: 'Credit_Card',
    card: { ccNum: '4242424242424242', expiry: '12/30', cvv: '123' },
    donor: { firstName: 'Moshe', lastName: 'Cohen' },
    ...over,
  });
  /** A monthly schedule starting in ten days (on the server's clock). */
  const terms = (count: number) => ({
    frequencyID: 'Monthly',
    startDate: new Date(h.clock.now.getTime() + 240 * HOUR).toISOString().slice(0, 10),
    totalPaymentsCount: count,
  });
  const scheduleReq = (over: Record<string, unknown> = {}) => ({
    ...chargeReq({ amount: 120 }),
    scheduleDetails: terms(12),
    ...over,
  });
  const paymentsOf = async (opId: string) =>
    h.db.query<{ status: string }>('SELECT status FROM payments WHERE unique_transaction_id = $1', [opId]);
  const schedulesOf = async (opId: string) =>
    h.db.query('SELECT 1 FROM schedules WHERE unique_transaction_id = $1', [opId]);
  /** Runs `fn` with the server's clock moved by `ms`, then puts it back. */
  async function later<T>(ms: number, fn: () => Promise<T>): Promise<T> {
    const saved = h.clock.now;
    h.clock.set(new Date(saved.getTime() + ms).toISOString());
    try {
      return await fn();
    } finally {
      h.clock.now = saved;
    }
  }
  /** Refused for good with `code`: not retryable, nothing charged, no payment or schedule. */
  async function expectRefused(ops: SyncOperation[], code: string) {
    const before = counts.charges;
    const r = await device.push(ops);
    expect(r.status).toBe(200);
    for (const [i, op] of ops.entries()) {
      expect(r.body.results[i]).toMatchObject({ opId: op.opId, status: 'Error', retryable: false });
      expect(r.body.results[i].error.errorCode).toBe(code);
      expect(await paymentsOf(op.opId)).toHaveLength(0);
      expect(await schedulesOf(op.opId)).toHaveLength(0);
    }
    expect(counts.charges).toBe(before);
    return r;
  }

  describe('a sealed box is bound to every clear field of its item', () => {
    /** A genuine item with its request changed after sealing, as an attacker would. */
    async function altered(
      kind: 'charge' | 'schedule',
      request: Record<string, unknown>,
      change: (op: SyncOperation) => void,
    ) {
      const op = await sealedOp(device, kind, request, {
        deviceCreatedDate: new Date(h.clock.now.getTime() - HOUR).toISOString(),
      });
      change(op);
      return op;
    }

    it('the untouched item charges (the control)', async () => {
      const op = await sealedOp(device, 'charge', chargeReq());
      const r = await device.push([op]);
      expect(r.body.results[0]).toMatchObject({ status: 'Success' });
      expect(await paymentsOf(op.opId)).toHaveLength(1);
    });

    it('another amount, currency, method, collector, donor, campaign, device time, offline flag or schedule terms: refused, never charged', async () => {
      const ops = [
        await altered('charge', chargeReq(), (op) => {
          op.request.amount = 1800;
        }),
        await altered('charge', chargeReq(), (op) => {
          op.request.currency = 'ILS';
        }),
        await altered('charge', chargeReq(), (op) => {
          op.request.collectorId = 'C1';
        }),
        await altered('charge', chargeReq(), (op) => {
          op.request.donor = { firstName: 'Someone', lastName: 'Else' };
        }),
        await altered('charge', chargeReq(), (op) => {
          op.request.donorId = 'D1';
        }),
        await altered('charge', chargeReq(), (op) => {
          op.request.campaignNum = 7;
        }),
        await altered('charge', chargeReq(), (op) => {
          op.deviceCreatedDate = new Date(h.clock.now.getTime() - 2 * HOUR).toISOString();
        }),
        await altered('schedule', scheduleReq(), (op) => {
          op.request.scheduleDetails = terms(120);
        }),
        await altered('schedule', scheduleReq(), (op) => {
          op.kind = 'charge';
        }),
      ];
      // Taken offline (the limits apply), pushed as if it had been taken online.
      const offline = await sealedOp(device, 'charge', chargeReq({ amount: 5000 }), { offline: true });
      offline.offline = false;
      await expectRefused([...ops, offline], 'ENVELOPE_INVALID');
    });

    it('the box of one item on another item, and a changed opId, are refused', async () => {
      const small = await sealedOp(device, 'charge', chargeReq({ amount: 1 }));
      const big = await sealedOp(device, 'charge', chargeReq({ amount: 900 }));
      const moved = { ...big, sealed: small.sealed };
      const renamed = await sealedOp(device, 'charge', chargeReq());
      const newId = randomUUID();
      const relabelled = {
        ...renamed,
        opId: newId,
        request: { ...renamed.request, uniqueTransactionId: newId },
      };
      await expectRefused([moved, relabelled], 'ENVELOPE_INVALID');
    });
  });

  describe('boxes sealed under the v1 additional data (terminals of the previous version)', () => {
    const setV2Since = (at: Date) =>
      h.db.query("UPDATE device_sync_marks SET at = $1 WHERE name = 'seal_aad_v2_since'", [at.toISOString()]);

    it('open during the transition window (the offline expiry after the upgrade), and are refused after it', async () => {
      await setV2Since(new Date(h.clock.now.getTime() - HOUR));
      const inWindow = await sealedOp(device, 'charge', chargeReq(), { aad: 'v1' });
      const r = await device.push([inWindow]);
      expect(r.body.results[0]).toMatchObject({ status: 'Success' });

      await setV2Since(new Date(h.clock.now.getTime() - 73 * HOUR));
      const afterWindow = await sealedOp(device, 'charge', chargeReq(), { aad: 'v1' });
      const refused = await expectRefused([afterWindow], 'ENVELOPE_OUTDATED');
      expect(refused.body.results[0].error.message).toContain('older terminal version');
      // A v1 box of another item stays refused as tampered, window or not.
      await setV2Since(new Date(h.clock.now.getTime() - HOUR));
      const other = await sealedOp(device, 'charge', chargeReq(), { aad: 'v1' });
      const thief = {
        ...(await sealedOp(device, 'charge', chargeReq(), { aad: 'v1' })),
        sealed: other.sealed,
      };
      await expectRefused([thief], 'ENVELOPE_INVALID');
    });
  });

  describe("the offline expiry is judged on the server's clock too", () => {
    it('a device time ahead of the server is sent again later; within a small skew it is accepted', async () => {
      const ahead = await sealedOp(device, 'charge', chargeReq(), {
        deviceCreatedDate: new Date(h.clock.now.getTime() + 10 * 60_000).toISOString(),
      });
      const before = counts.charges;
      const r = await device.push([ahead]);
      expect(r.body.results[0]).toMatchObject({ status: 'Error', retryable: true });
      expect(r.body.results[0].error.errorCode).toBe('DEVICE_CLOCK_AHEAD');
      expect(counts.charges).toBe(before);
      expect(await paymentsOf(ahead.opId)).toHaveLength(0);

      const skewed = await sealedOp(device, 'charge', chargeReq(), {
        deviceCreatedDate: new Date(h.clock.now.getTime() + 2 * 60_000).toISOString(),
      });
      expect((await device.push([skewed])).body.results[0].status).toBe('Success');
    });

    it('a device that lies about its clock gets at most the expiry from the first time the server saw the item', async () => {
      const opId = randomUUID();
      // First sent with a clock ahead: refused for now, but seen.
      const first = await sealedOp(device, 'charge', chargeReq(), {
        opId,
        deviceCreatedDate: new Date(h.clock.now.getTime() + 30 * 60_000).toISOString(),
      });
      expect((await device.push([first])).body.results[0].error.errorCode).toBe('DEVICE_CLOCK_AHEAD');
      await later(73 * HOUR, async () => {
        // Three days later the device claims the item was taken a minute ago.
        const relabelled = await sealedOp(device, 'charge', chargeReq(), {
          opId,
          deviceCreatedDate: new Date(h.clock.now.getTime() - 60_000).toISOString(),
        });
        const r = await expectRefused([relabelled], 'OFFLINE_EXPIRED');
        expect(r.body.results[0].error.message).toContain('First sent to the server');
      });
      const [seen] = await h.db.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM device_ops_seen WHERE op_id = $1',
        [opId],
      );
      expect(seen!.n).toBe(1);
    });

    it('what the server saw is kept 31 days (past every expiry), then purged', async () => {
      const [before] = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_ops_seen');
      expect(before!.n).toBeGreaterThan(0);
      // Nothing seen within 31 days goes.
      expect(await purgeOpsSeen(h.db, new Date(h.clock.now.getTime() + 30 * 24 * HOUR))).toBe(0);
      const [kept] = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_ops_seen');
      expect(kept!.n).toBe(before!.n);
      // Seen during this test file (at most a few simulated days ago): gone 40 days on.
      await purgeOpsSeen(h.db, new Date(h.clock.now.getTime() + 40 * 24 * HOUR));
      const [after] = await h.db.query<{ n: number }>('SELECT count(*)::int AS n FROM device_ops_seen');
      expect(after!.n).toBe(0);
    });

    it('an item charged before it expired still answers its outcome when pushed again after the window', async () => {
      const op = await sealedOp(device, 'charge', chargeReq());
      const first = await device.push([op]);
      expect(first.body.results[0].status).toBe('Success');
      const again = await later(100 * HOUR, () => device.push([op]));
      expect(again.body.results).toEqual(first.body.results);
      expect(await paymentsOf(op.opId)).toHaveLength(1);
    });
  });

  describe("the organisation's offline limits, judged by the server", () => {
    let limited: TestDevice;
    beforeAll(async () => {
      // One payment at most 100.00; all held offline together at most 250.00.
      const set = await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        offline: { perPaymentMinor: 10_000, totalMinor: 25_000, expiryHours: 72 },
      });
      expect(set.status).toBe(200);
      limited = await pairTestDevice(h, 'Offline kiosk');
    });
    afterAll(async () => {
      await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
        offline: { perPaymentMinor: 100_000, totalMinor: 1_000_000, expiryHours: 72 },
      });
    });
    const ago = (hours: number) => new Date(h.clock.now.getTime() - hours * HOUR).toISOString();

    it('an offline payment over the per-payment limit is refused; the same amount taken online is charged', async () => {
      const over = await sealedOp(limited, 'charge', chargeReq({ amount: 150 }), {
        offline: true,
        deviceCreatedDate: ago(1),
      });
      const overSchedule = await sealedOp(
        limited,
        'schedule',
        scheduleReq({ amount: 1200, scheduleDetails: terms(4) }),
        { offline: true, deviceCreatedDate: ago(1) },
      );
      const before = counts.charges;
      const r = await limited.push([over, overSchedule]);
      for (const [i, op] of [over, overSchedule].entries()) {
        expect(r.body.results[i]).toMatchObject({ status: 'Error', retryable: false });
        expect(r.body.results[i].error.errorCode).toBe('OFFLINE_LIMIT_EXCEEDED');
        expect(await paymentsOf(op.opId)).toHaveLength(0);
        expect(await schedulesOf(op.opId)).toHaveLength(0);
      }
      expect(r.body.results[0].error.message).toContain('at most 100.00');
      expect(counts.charges).toBe(before);
      // The same push again answers the same (the verdict is kept).
      expect((await limited.push([over])).body.results[0]).toEqual(r.body.results[0]);

      const online = await sealedOp(limited, 'charge', chargeReq({ amount: 150 }));
      expect((await limited.push([online])).body.results[0].status).toBe('Success');
    });

    it("offline items beyond the device's offline total are refused; the ones within it are charged", async () => {
      // Taken offline 5, 4, 3 and 2 hours ago, 90.00 each, none forwarded: the third would make
      // 270.00 held, over the 250.00 allowed; the fourth (90 + 90 + 90 = 270 again) too.
      const ops = await Promise.all(
        [5, 4, 3, 2].map((hours) =>
          sealedOp(limited, 'charge', chargeReq({ amount: 90 }), {
            offline: true,
            deviceCreatedDate: ago(hours),
          }),
        ),
      );
      const before = counts.charges;
      const r = await limited.push(ops);
      expect(r.body.results.map((x: { status: string }) => x.status)).toEqual([
        'Success',
        'Success',
        'Error',
        'Error',
      ]);
      expect(r.body.results[2].error.errorCode).toBe('OFFLINE_LIMIT_EXCEEDED');
      expect(r.body.results[3].error.errorCode).toBe('OFFLINE_LIMIT_EXCEEDED');
      expect(counts.charges).toBe(before + 2);
      expect(await paymentsOf(ops[2]!.opId)).toHaveLength(0);
      expect(await paymentsOf(ops[3]!.opId)).toHaveLength(0);
      // Split over several pushes, the same items are judged the same (the device still held the
      // earlier ones when it took the later ones).
      const replay = await limited.push([ops[3]!]);
      expect(replay.body.results[0]).toEqual(r.body.results[3]);

      // Once those were forwarded, the device holds nothing: a new offline item is within limits.
      await later(HOUR, async () => {
        const next = await sealedOp(limited, 'charge', chargeReq({ amount: 90 }), {
          offline: true,
          deviceCreatedDate: h.clock.now.toISOString(),
        });
        expect((await limited.push([next])).body.results[0].status).toBe('Success');
      });
    });
  });

  describe('a charged item pushed again after its idempotency record was purged', () => {
    it('is never charged twice (paid, declined or a schedule)', async () => {
      const paid = await sealedOp(device, 'charge', chargeReq());
      const declined = await sealedOp(
        device,
        'charge',
        chargeReq({ card: { ccNum: '4000000000000002', expiry: '12/30', cvv: '123' } }),
      );
      const schedule = await sealedOp(device, 'schedule', scheduleReq());
      const first = await device.push([paid, declined, schedule]);
      expect(first.body.results.map((x: { status: string }) => x.status)).toEqual([
        'Success',
        'Declined',
        'Success',
      ]);
      const ops = [paid, declined, schedule];
      // The 30-day purge of idempotency records, 31 days on.
      await h.db.query(
        'DELETE FROM idempotency_keys WHERE key IN (SELECT jsonb_array_elements_text($1::jsonb))',
        [JSON.stringify(ops.map((o) => o.opId))],
      );
      const before = counts.charges;
      const again = await later(31 * 24 * HOUR, () => device.push(ops));
      for (const [i, op] of ops.entries()) {
        expect(again.body.results[i]).toMatchObject({ opId: op.opId, status: 'Error', retryable: false });
      }
      expect(counts.charges).toBe(before);
      expect(await paymentsOf(paid.opId)).toHaveLength(1);
      expect(await paymentsOf(declined.opId)).toHaveLength(1);
      expect(await schedulesOf(schedule.opId)).toHaveLength(1);
      // Within the offline window too (no expiry to hide behind): refused as already used.
      const quick = await sealedOp(device, 'charge', chargeReq());
      expect((await device.push([quick])).body.results[0].status).toBe('Success');
      await h.db.query('DELETE FROM idempotency_keys WHERE key = $1', [quick.opId]);
      const before2 = counts.charges;
      const replay = await device.push([quick]);
      expect(replay.body.results[0]).toMatchObject({ status: 'Error', retryable: false });
      expect(replay.body.results[0].error.errorCode).toBe('DUPLICATE_TRANSACTION');
      expect(counts.charges).toBe(before2);
      expect(await paymentsOf(quick.opId)).toHaveLength(1);
    });
  });
});
