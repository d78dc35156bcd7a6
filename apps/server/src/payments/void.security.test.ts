/**
 * Void scoping: a credential that sits in a public form or a terminal must not void other sources'
 * payments (e.g. to hide card-testing charges): only an API key may void any payment of its org.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSource } from '../admin/admin-service.ts';
import { pairTestDevice, sealedOp, type TestDevice } from '../testing/device-client.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';

describe.each(await testDatabases())('void scoping on %s', (kind) => {
  let h: Harness;
  let otherSource: { sourceGuid: string };
  let deviceA: TestDevice;
  let deviceB: TestDevice;
  beforeAll(async () => {
    h = await createHarness(kind);
    otherSource = await createSource(h.db, h.org.orgGuid, 'Second form', 'external', true);
    deviceA = await pairTestDevice(h, 'Kiosk A');
    deviceB = await pairTestDevice(h, 'Kiosk B');
  });
  afterAll(async () => {
    await h?.close();
  });

  const payExternal = async () => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h), sourceAuth(h));
    expect(r.body.paymentStatus).toBe('Success');
    return r.body.receiptNum as string;
  };
  const payOnDevice = async (device: TestDevice) => {
    const op = await sealedOp(device, 'charge', chargeBody(h, { uniqueTransactionId: undefined }));
    const r = await device.push([op]);
    expect(r.body.results[0].status).toBe('Success');
    return r.body.results[0].receiptNum as string;
  };
  const voidOnDevice = async (device: TestDevice, receiptNum: string) => {
    const op = await sealedOp(device, 'void', { orgGUID: h.org.orgGuid, receiptNum });
    return (await device.push([op])).body.results[0];
  };
  const voidVia = (receiptNum: string, auth: Record<string, string>) =>
    h.request('POST', '/v1/External/VoidPayment', { orgGUID: h.org.orgGuid, receiptNum }, auth);
  const statusOf = async (receiptNum: string) =>
    (
      await h.db.query<{ status: string }>('SELECT status FROM payments WHERE receipt_num = $1', [receiptNum])
    )[0]!.status;

  it("device A cannot void device B's payment nor an External-API payment; it can void its own", async () => {
    const ofB = await payOnDevice(deviceB);
    const external = await payExternal();
    for (const receipt of [ofB, external]) {
      const r = await voidOnDevice(deviceA, receipt);
      expect(r.status).toBe('Error');
      expect(r.retryable).toBe(false);
      expect(r.error.errorCode).toBe('FORBIDDEN');
      expect(await statusOf(receipt)).toBe('Success');
    }
    // Its credential on the External API is refused the same way.
    expect((await voidVia(ofB, { authorization: deviceA.credential })).status).toBe(403);
    const ofA = await payOnDevice(deviceA);
    expect((await voidOnDevice(deviceA, ofA)).status).toBe('Success');
    expect(await statusOf(ofA)).toBe('Voided');
  });

  it("a source GUID cannot void another source's payment (nor a device's); it can void its own", async () => {
    const mine = await payExternal();
    const ofDevice = await payOnDevice(deviceA);
    for (const receipt of [mine, ofDevice]) {
      const r = await voidVia(receipt, { authorization: otherSource.sourceGuid });
      expect(r.status).toBe(403);
      expect(r.body.error.errorCode).toBe('FORBIDDEN');
      expect(r.body.error.message).toMatch(/not made through this credential/);
      expect(await statusOf(receipt)).toBe('Success');
    }
    expect((await voidVia(mine, sourceAuth(h))).status).toBe(200);
    expect(await statusOf(mine)).toBe('Voided');
  });

  it("an API key voids any of its organisation's payments", async () => {
    const receipts = [await payExternal(), await payOnDevice(deviceB)];
    for (const receipt of receipts) {
      const r = await voidVia(receipt, keyAuth(h));
      expect(r.status).toBe(200);
      expect(await statusOf(receipt)).toBe('Voided');
    }
  });
});
