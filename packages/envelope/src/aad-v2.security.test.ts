/**
 * The v2 additional data (`sealAadV2`): one canonical text for an operation's clear fields, the
 * same after the JSON trip from the terminal to the server whatever the key order, and different
 * for any change an attacker holding the device credential could make to a queued item.
 */
import { canonicalJson, type SealBinding, sealAad, sealAadV2 } from '@kupah/contracts';
import { beforeAll, describe, expect, it } from 'vitest';
import { createOpener, createSealer, type EnvelopeKeyPair, generateEnvelopeKeyPair } from './index.ts';

const OP: SealBinding = {
  opId: '6f1c2b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
  kind: 'schedule',
  deviceCreatedDate: '2026-11-22T14:30:00.000Z',
  offline: true,
  request: {
    amount: 120,
    currency: 'USD',
    paymentMethodId: 'Credit_Card',
    uniqueTransactionId: '6f1c2b8e-3a4d-4e5f-8a9b-0c1d2e3f4a5b',
    card: { expiry: '12/30' },
    donor: { firstName: 'Moshe', lastName: 'Cohen' },
    collectorId: 'C1',
    campaignNum: 3,
    reasons: [{ reasonNum: 1, reasonAmount: 120 }],
    scheduleDetails: { frequencyID: 'Monthly', startDate: '2026-12-01', totalPaymentsCount: 12 },
  },
};

/** The same op with every object's keys in reverse order, through JSON (as the server reads it). */
function reordered(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reordered);
  if (typeof value !== 'object' || value === null) return value;
  const o = value as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .reverse()
      .map((k) => [k, reordered(o[k])]),
  );
}

let pair: EnvelopeKeyPair;
beforeAll(async () => {
  pair = await generateEnvelopeKeyPair();
});

describe('sealAadV2', () => {
  it('is canonical: key order and the JSON trip do not change it', () => {
    const wire = JSON.parse(JSON.stringify(reordered(OP))) as SealBinding;
    expect(sealAadV2('dev_1', wire)).toBe(sealAadV2('dev_1', OP));
    expect(canonicalJson({ b: 1, a: { d: undefined, c: [2, 1] } })).toBe('{"a":{"c":[2,1]},"b":1}');
  });

  it('a box sealed for an op opens for that op only: any changed clear field and it does not', async () => {
    const box = await createSealer({ kid: pair.kid, jwk: pair.publicJwk }).seal(
      { card: { ccNum: '4242424242424242', cvv: '123' } },
      sealAadV2('dev_1', OP),
    );
    const opener = createOpener([{ kid: pair.kid, privateJwk: pair.privateJwk }]);
    const wire = JSON.parse(JSON.stringify(reordered(OP))) as SealBinding;
    await expect(opener.open(box, sealAadV2('dev_1', wire))).resolves.toEqual({
      card: { ccNum: '4242424242424242', cvv: '123' },
    });
    const req = OP.request;
    const changes: SealBinding[] = [
      { ...OP, request: { ...req, amount: 1200 } },
      { ...OP, request: { ...req, currency: 'ILS' } },
      { ...OP, request: { ...req, paymentMethodId: 'ACH' } },
      { ...OP, request: { ...req, donor: { firstName: 'Moshe', lastName: 'Levi' } } },
      { ...OP, request: { ...req, donorId: 'D9' } },
      { ...OP, request: { ...req, collectorId: 'C2' } },
      { ...OP, request: { ...req, campaignNum: 4 } },
      { ...OP, request: { ...req, reasons: [{ reasonNum: 2, reasonAmount: 120 }] } },
      {
        ...OP,
        request: { ...req, scheduleDetails: { ...(req.scheduleDetails as object), totalPaymentsCount: 120 } },
      },
      { ...OP, request: { ...req, uniqueTransactionId: '00000000-0000-4000-8000-000000000000' } },
      { ...OP, opId: '00000000-0000-4000-8000-000000000000' },
      { ...OP, opId: OP.opId.toUpperCase() },
      { ...OP, kind: 'charge' },
      { ...OP, deviceCreatedDate: '2026-11-22T14:30:01.000Z' },
      { ...OP, offline: false },
    ];
    for (const changed of changes) {
      await expect(opener.open(box, sealAadV2('dev_1', changed))).rejects.toMatchObject({ code: 'TAMPERED' });
    }
    await expect(opener.open(box, sealAadV2('dev_2', OP))).rejects.toMatchObject({ code: 'TAMPERED' });
    // Nor under the old additional data (no downgrade to v1 for a v2 box).
    await expect(opener.open(box, sealAad('dev_1', OP.opId))).rejects.toMatchObject({ code: 'TAMPERED' });
  });
});
