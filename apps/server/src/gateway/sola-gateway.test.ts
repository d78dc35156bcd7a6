/**
 * The Sola adapter against the local Sola emulator, over real loopback HTTP.
 */
import { type ValidBankAccount, type ValidCard, validateBankAccount, validateCard } from '@kupah/instruments';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type SolaEmulator, startSolaEmulator } from '../testing/sola-emulator.ts';
import {
  type AuthorizeRequest,
  type Gateway,
  GatewayOutcomeUnknown,
  type GatewayResult,
  GatewayUnreachable,
  type Instrument,
} from './gateway.ts';
import {
  SOLA_API_VERSION,
  SOLA_DEFAULT_REPORT_URL,
  SOLA_DEFAULT_URL,
  SOLA_INVOICE_LENGTH,
  SOLA_RUNS_RECURRENCES,
  solaAmount,
  solaAmountToMinor,
  solaGateway,
  solaInvoice,
  solaReportUrl,
} from './sola-gateway.ts';

const ORG = '6f1c2a4e-0b7d-4f43-9a52-3c8e2d1b5a90';
const KEY = 'sola_test_key_4c7d9e';
const CVV = '987';
const expiryYear = (new Date().getUTCFullYear() + 3) % 100;

function card(pan: string, cvv = CVV): ValidCard {
  const r = validateCard({ ccNum: pan, expiry: `07/${expiryYear}`, cvv }, new Date(), { requireCvv: false });
  if (!r.ok) throw new Error(`test card invalid: ${JSON.stringify(r.errors)}`);
  return r.value;
}
function bank(accountNum = '000123456789', routingNum = '011000015'): ValidBankAccount {
  const r = validateBankAccount({ routingNum, accountNum, nameOnAccount: 'Test Donor' });
  if (!r.ok) throw new Error('test account invalid');
  return r.value;
}
const cc = (pan: string, cvv = CVV): Instrument => ({
  method: 'Credit_Card',
  card: card(pan, cvv),
  cardHolderName: 'Dana Donor',
});
const ach = (accountNum?: string): Instrument => ({ method: 'ACH', bank: bank(accountNum) });

let seq = 0;
const newKey = () => `${ORG}:txn-${Date.now()}-${++seq}-${'x'.repeat(200)}`;

let clock = Date.now();
let emu: SolaEmulator;
let gw: Gateway;

/** Every thrown message and every result, to check that nothing secret ever comes back. */
const seenErrors: string[] = [];
const seenResults: unknown[] = [];
async function attempt<T>(p: Promise<T>): Promise<T | Error> {
  try {
    const r = await p;
    seenResults.push(r);
    return r;
  } catch (err) {
    seenErrors.push(`${(err as Error).name}: ${(err as Error).message}`);
    return err as Error;
  }
}
const authorize = (req: Partial<AuthorizeRequest> & { instrument: Instrument }, g = gw) =>
  attempt(
    g.authorize({
      idempotencyKey: req.idempotencyKey ?? newKey(),
      amountMinor: req.amountMinor ?? 2500,
      currency: req.currency ?? 'USD',
      instrument: req.instrument,
    }),
  );
const lastReceived = () => emu.received().at(-1)!;
function ok(r: GatewayResult | Error | null): GatewayResult {
  if (r instanceof Error) throw r;
  if (r === null) throw new Error('expected a result');
  return r;
}

beforeAll(async () => {
  emu = await startSolaEmulator({ key: KEY, now: () => clock });
  gw = solaGateway({ key: KEY, url: emu.url, softwareName: 'KupahTest', softwareVersion: '9.9.9' });
});
afterEach(async () => {
  await emu.setFault(null);
  emu.setLatency(0);
});
afterAll(async () => {
  await emu.close();
  // Nothing secret in any error message or result of the whole file.
  const pans = [
    '4111111111111111',
    '4242424242424242',
    '4000000000000002',
    '4000000000000119',
    '5555555555554444',
  ];
  for (const text of seenErrors) {
    for (const secret of [...pans, '000123456789', KEY, 'wrong_key_1b2c3d', CVV])
      expect(text).not.toContain(secret);
  }
  const results = JSON.stringify(seenResults);
  for (const secret of [...pans, '000123456789', '000123450002', KEY, 'wrong_key_1b2c3d']) {
    expect(results).not.toContain(secret);
  }
  expect(seenErrors.length).toBeGreaterThan(5);
  expect(seenResults.length).toBeGreaterThan(10);
});

describe('constants and formatting', () => {
  it('uses the documented endpoints, version and recurrence decision', () => {
    expect(SOLA_DEFAULT_URL).toBe('https://x1.cardknox.com/gatewayjson');
    expect(SOLA_DEFAULT_REPORT_URL).toBe('https://x1.cardknox.com/reportjson');
    expect(solaReportUrl('http://127.0.0.1:9/gatewayjson')).toBe('http://127.0.0.1:9/reportjson');
    expect(SOLA_API_VERSION).toBe('5.0.0');
    expect(SOLA_RUNS_RECURRENCES).toBe(false);
    expect(gw.name).toBe('Sola');
    expect(gw.setupRecurring).toBeUndefined();
    expect(gw.recurringCharge).toBeUndefined();
  });

  it('formats amounts #.## from the integer, exactly', () => {
    expect(solaAmount(0)).toBe('0.00');
    expect(solaAmount(1)).toBe('0.01');
    expect(solaAmount(99)).toBe('0.99');
    expect(solaAmount(1050)).toBe('10.50');
    expect(solaAmount(100000000)).toBe('1000000.00');
    expect(solaAmount(Number.MAX_SAFE_INTEGER)).toBe('90071992547409.91');
    expect(() => solaAmount(-1)).toThrow(RangeError);
    expect(() => solaAmount(1.5)).toThrow(RangeError);
    expect(solaAmountToMinor('10.5')).toBe(1050);
    expect(solaAmountToMinor('7')).toBe(700);
    expect(solaAmountToMinor('abc')).toBeNull();
  });

  it('maps an idempotency key to a short, deterministic xInvoice', () => {
    const k = `${ORG}:${'u'.repeat(256)}`;
    expect(solaInvoice(k)).toBe(solaInvoice(k));
    expect(solaInvoice(k)).toHaveLength(SOLA_INVOICE_LENGTH);
    expect(solaInvoice(k)).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(solaInvoice(k)).not.toBe(solaInvoice(`${k}!`));
  });
});

describe('wire format', () => {
  it.each([
    [1, '0.01'],
    [1050, '10.50'],
    [100000000, '1000000.00'],
  ])('cc:sale of %i minor units sends xAmount %s and every required field', async (minor, text) => {
    const key = newKey();
    ok(await authorize({ idempotencyKey: key, amountMinor: minor, instrument: cc('4111111111111111') }));
    const { path, fields } = lastReceived();
    expect(path).toBe('/gatewayjson');
    expect(fields).toMatchObject({
      xkey: '***',
      xversion: '5.0.0',
      xsoftwarename: 'KupahTest',
      xsoftwareversion: '9.9.9',
      xcommand: 'cc:sale',
      xamount: text,
      xcurrency: 'USD',
      xcardnum: '****1111',
      xexp: `07${String(expiryYear).padStart(2, '0')}`,
      xcvv: '***',
      xname: 'Dana Donor',
      xinvoice: solaInvoice(key),
    });
    expect(fields.xinvoice!.length).toBeLessThanOrEqual(SOLA_INVOICE_LENGTH);
    expect(emu.charges(solaInvoice(key))).toMatchObject([{ amount: text, result: 'A', last4: '1111' }]);
  });

  it('leaves xCVV and xName out when there are none', async () => {
    ok(
      await authorize({
        instrument: { method: 'Credit_Card', card: card('4242424242424242', ''), cardHolderName: null },
      }),
    );
    const { fields } = lastReceived();
    expect(fields).not.toHaveProperty('xcvv');
    expect(fields).not.toHaveProperty('xname');
    expect(fields.xcardnum).toBe('****4242');
  });

  it('sends the currency it is given', async () => {
    ok(await authorize({ currency: 'ILS', instrument: cc('4111111111111111') }));
    expect(lastReceived().fields.xcurrency).toBe('ILS');
  });
});

describe('outcomes', () => {
  it('approved → Success with ref, token, brand and masked number', async () => {
    const r = ok(await authorize({ instrument: cc('4111111111111111') }));
    expect(r).toMatchObject({ status: 'Success', code: null, message: null, brand: 'Visa' });
    expect(r.gatewayRef).toMatch(/^\d+$/);
    expect(r.token).toBeTruthy();
    expect(r.masked).toMatch(/1111$/);
    expect(r.masked).not.toContain('4111111111111111');
  });

  it('Mastercard reports its brand', async () => {
    expect(ok(await authorize({ instrument: cc('5555555555554444') })).brand).toBe('MasterCard');
  });

  it('declined → Declined with Sola code and text', async () => {
    const r = ok(await authorize({ instrument: cc('4000000000000002') }));
    expect(r).toMatchObject({ status: 'Declined', code: 'SOLA_00005', message: 'Do Not Honor', token: null });
    expect(r.gatewayRef).toMatch(/^\d+$/);
  });

  it('error → Error with Sola code and text', async () => {
    const r = ok(await authorize({ instrument: cc('4000000000000119') }));
    expect(r).toMatchObject({ status: 'Error', code: 'SOLA_00096', message: 'System Error' });
  });

  it('a wrong key → Error SOLA_01208, and the key appears nowhere', async () => {
    const wrong = solaGateway({ key: 'wrong_key_1b2c3d', url: emu.url });
    const r = ok(await authorize({ instrument: cc('4111111111111111') }, wrong));
    expect(r).toMatchObject({ status: 'Error', code: 'SOLA_01208', message: 'Specified Key Not Found' });
    expect(JSON.stringify(r)).not.toContain('wrong_key_1b2c3d');
    expect(lastReceived().fields.xsoftwarename).toBe('Kupah');
  });

  it('an invalid amount is refused without calling Sola', async () => {
    const before = emu.requests();
    expect(ok(await authorize({ amountMinor: 0, instrument: cc('4111111111111111') })).code).toBe(
      'INVALID_AMOUNT',
    );
    expect(emu.requests()).toBe(before);
  });

  it('charity cards are not Sola’s: METHOD_NOT_SUPPORTED, nothing sent', async () => {
    const before = emu.requests();
    const charity: Instrument = {
      method: 'Provider_2',
      charity: {
        provider: 'Provider_2',
        number: '6002000000000001',
        isToken: false,
        last4: '0001',
        brand: 'P2',
      },
    };
    expect(ok(await authorize({ instrument: charity }))).toMatchObject({
      status: 'Error',
      code: 'METHOD_NOT_SUPPORTED',
    });
    expect(ok(await authorize({ instrument: { method: 'Provider_1', token: 'tok_abcdefgh' } })).code).toBe(
      'METHOD_NOT_SUPPORTED',
    );
    expect(
      ok(await attempt(gw.tokenize({ idempotencyKey: newKey(), instrument: charity, currency: 'USD' }))).code,
    ).toBe('METHOD_NOT_SUPPORTED');
    expect(
      ok(await attempt(gw.void({ gatewayRef: '1', idempotencyKey: newKey(), method: 'Provider_3' }))).code,
    ).toBe('METHOD_NOT_SUPPORTED');
    expect(emu.requests()).toBe(before);
  });
});

describe('tokens', () => {
  it('cc:save returns a token; a sale with xToken charges it', async () => {
    const saveKey = newKey();
    const saved = ok(
      await attempt(
        gw.tokenize({ idempotencyKey: saveKey, instrument: cc('4242424242424242'), currency: 'USD' }),
      ),
    );
    expect(saved).toMatchObject({ status: 'Success', brand: 'Visa' });
    expect(saved.token).toBeTruthy();
    expect(lastReceived().fields).toMatchObject({ xcommand: 'cc:save', xinvoice: solaInvoice(saveKey) });
    expect(lastReceived().fields).not.toHaveProperty('xamount');

    const key = newKey();
    const r = ok(
      await authorize({ idempotencyKey: key, instrument: { method: 'Credit_Card', token: saved.token! } }),
    );
    expect(r.status).toBe('Success');
    const { fields } = lastReceived();
    expect(fields).toMatchObject({ xcommand: 'cc:sale', xtoken: saved.token });
    expect(fields).not.toHaveProperty('xcardnum');
    expect(fields).not.toHaveProperty('xexp');
    expect(emu.charges(solaInvoice(key))).toMatchObject([{ result: 'A', last4: '4242' }]);
  });

  it('a token of a declining card declines', async () => {
    const saved = ok(
      await attempt(
        gw.tokenize({ idempotencyKey: newKey(), instrument: cc('4000000000000002'), currency: 'USD' }),
      ),
    );
    expect(saved.status).toBe('Success');
    const r = ok(await authorize({ instrument: { method: 'Credit_Card', token: saved.token! } }));
    expect(r.status).toBe('Declined');
  });

  it('tokenize of a token returns it without calling Sola', async () => {
    const before = emu.requests();
    const r = ok(
      await attempt(
        gw.tokenize({
          idempotencyKey: newKey(),
          instrument: { method: 'ACH', token: 'abc' },
          currency: 'USD',
        }),
      ),
    );
    expect(r).toMatchObject({ status: 'Success', token: 'abc' });
    expect(emu.requests()).toBe(before);
  });

  it('check:save returns an ACH token', async () => {
    const r = ok(
      await attempt(gw.tokenize({ idempotencyKey: newKey(), instrument: ach(), currency: 'USD' })),
    );
    expect(r.status).toBe('Success');
    expect(lastReceived().fields).toMatchObject({
      xcommand: 'check:save',
      xrouting: '011000015',
      xaccount: '****6789',
    });
    const sale = ok(await authorize({ instrument: { method: 'ACH', token: r.token! } }));
    expect(sale.status).toBe('Success');
    expect(lastReceived().fields).toMatchObject({ xcommand: 'check:sale', xtoken: r.token });
  });
});

describe('ACH and voids', () => {
  it('check:sale sends routing, account and name; check:void voids it', async () => {
    const key = newKey();
    const r = ok(await authorize({ idempotencyKey: key, amountMinor: 1050, instrument: ach() }));
    expect(r.status).toBe('Success');
    expect(r.masked).toMatch(/6789$/);
    expect(lastReceived().fields).toMatchObject({
      xcommand: 'check:sale',
      xrouting: '011000015',
      xaccount: '****6789',
      xname: 'Test Donor',
      xamount: '10.50',
      xinvoice: solaInvoice(key),
    });
    const v = ok(
      await attempt(gw.void({ gatewayRef: r.gatewayRef!, idempotencyKey: newKey(), method: 'ACH' })),
    );
    expect(v.status).toBe('Success');
    expect(lastReceived().fields).toMatchObject({ xcommand: 'check:void', xrefnum: r.gatewayRef });
    expect(emu.charges(solaInvoice(key))).toMatchObject([{ command: 'check:sale', voided: true }]);
  });

  it('an ACH account ending in 0002 is declined', async () => {
    expect(ok(await authorize({ instrument: ach('000123450002') })).status).toBe('Declined');
  });

  it('ACH without a name on the account is refused before sending', async () => {
    const before = emu.requests();
    const b = { ...bank(), nameOnAccount: null };
    expect(ok(await authorize({ instrument: { method: 'ACH', bank: b } })).code).toBe(
      'NAME_ON_ACCOUNT_REQUIRED',
    );
    expect(emu.requests()).toBe(before);
  });

  it('cc:void voids a card sale; a second void is an error', async () => {
    const key = newKey();
    const r = ok(await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') }));
    const v = ok(
      await attempt(gw.void({ gatewayRef: r.gatewayRef!, idempotencyKey: newKey(), method: 'Credit_Card' })),
    );
    expect(v.status).toBe('Success');
    expect(v.gatewayRef).not.toBe(r.gatewayRef);
    expect(lastReceived().fields).toMatchObject({ xcommand: 'cc:void', xrefnum: r.gatewayRef });
    expect(emu.charges(solaInvoice(key))[0]!.voided).toBe(true);
    const again = ok(
      await attempt(gw.void({ gatewayRef: r.gatewayRef!, idempotencyKey: newKey(), method: 'Credit_Card' })),
    );
    expect(again.status).toBe('Error');
  });

  it('voiding a card sale as ACH does not find it', async () => {
    const r = ok(await authorize({ instrument: cc('4111111111111111') }));
    const v = ok(
      await attempt(gw.void({ gatewayRef: r.gatewayRef!, idempotencyKey: newKey(), method: 'ACH' })),
    );
    expect(v.status).toBe('Error');
  });
});

describe('transport failures', () => {
  it('refused connection → GatewayUnreachable, nothing charged', async () => {
    const key = newKey();
    await emu.setFault('refuse');
    const before = emu.requests();
    const err = await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') });
    expect(err).toBeInstanceOf(GatewayUnreachable);
    expect((err as Error).message).toContain('ECONNREFUSED');
    expect(emu.requests()).toBe(before);
    await emu.setFault(null);
    expect(emu.charges(solaInvoice(key))).toHaveLength(0);
  });

  it('hang → the caller’s timeout → GatewayOutcomeUnknown', async () => {
    await emu.setFault('hang');
    const err = await attempt(
      gw.authorize(
        { idempotencyKey: newKey(), amountMinor: 100, currency: 'USD', instrument: cc('4111111111111111') },
        { signal: AbortSignal.timeout(200) },
      ),
    );
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
  });

  it('HTTP 500 → GatewayOutcomeUnknown', async () => {
    await emu.setFault('http-500');
    const err = await authorize({ instrument: cc('4111111111111111') });
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    expect((err as Error).message).toContain('HTTP 500');
  });

  it('malformed answer → GatewayOutcomeUnknown (and the charge is found by lookup)', async () => {
    const key = newKey();
    await emu.setFault('malformed');
    const err = await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') });
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    await emu.setFault(null);
    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'authorize',
          amountMinor: 2500,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    expect(found.status).toBe('Success');
  });

  it('drop after processing → OutcomeUnknown; lookup finds exactly the one charge', async () => {
    const key = newKey();
    const invoice = solaInvoice(key);
    await emu.setFault('drop-after-processing');
    const err = await authorize({
      idempotencyKey: key,
      amountMinor: 1050,
      instrument: cc('4111111111111111'),
    });
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    await emu.setFault(null);

    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'authorize',
          amountMinor: 1050,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    const charges = emu.charges(invoice);
    expect(charges).toHaveLength(1);
    expect(found).toMatchObject({
      status: 'Success',
      gatewayRef: charges[0]!.refNum,
      message: null,
      brand: 'Visa',
    });
    expect(found.token).toBe(charges[0]!.token);
    expect(lastReceived()).toMatchObject({
      path: '/reportjson',
      fields: { xcommand: 'report:all', xinvoice: `ai${invoice}`, xgetnewest: 'true', xmaxrecords: '1000' },
    });
    // The lookup charged nothing: still exactly one sale of this invoice.
    expect(emu.charges(invoice)).toHaveLength(1);
  });

  it('lookup of a lost declined sale → Declined', async () => {
    const key = newKey();
    await emu.setFault('drop-after-processing');
    expect(await authorize({ idempotencyKey: key, instrument: cc('4000000000000002') })).toBeInstanceOf(
      GatewayOutcomeUnknown,
    );
    await emu.setFault(null);
    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'authorize',
          amountMinor: 2500,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    expect(found).toMatchObject({ status: 'Declined', code: 'SOLA_00005', message: 'Do Not Honor' });
  });

  it('lookup of a lost tokenize → its token', async () => {
    const key = newKey();
    await emu.setFault('drop-after-processing');
    const err = await attempt(
      gw.tokenize({ idempotencyKey: key, instrument: cc('4242424242424242'), currency: 'USD' }),
    );
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    await emu.setFault(null);
    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'tokenize',
          amountMinor: 0,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    expect(found.status).toBe('Success');
    expect(found.token).toBeTruthy();
    // A tokenize is not mistaken for a sale of the same key, nor the other way round.
    expect(
      await gw.lookup({
        idempotencyKey: key,
        kind: 'authorize',
        amountMinor: 0,
        currency: 'USD',
        sentAt: new Date(clock),
      }),
    ).toBeNull();
  });

  it('lookup of an invoice never sent → null', async () => {
    const r = await attempt(
      gw.lookup({
        idempotencyKey: newKey(),
        kind: 'authorize',
        amountMinor: 2500,
        currency: 'USD',
        sentAt: new Date(clock),
      }),
    );
    expect(r).toBeNull();
  });

  it('lookup while Sola is down throws (the recovery worker asks again later)', async () => {
    await emu.setFault('refuse');
    const err = await attempt(
      gw.lookup({
        idempotencyKey: newKey(),
        kind: 'authorize',
        amountMinor: 2500,
        currency: 'USD',
        sentAt: new Date(clock),
      }),
    );
    expect(err).toBeInstanceOf(Error);
  });

  it('lookup with a wrong key throws instead of answering null', async () => {
    const wrong = solaGateway({ key: 'wrong_key_1b2c3d', url: emu.url });
    const err = await attempt(
      wrong.lookup({
        idempotencyKey: newKey(),
        kind: 'authorize',
        amountMinor: 1,
        currency: 'USD',
        sentAt: new Date(clock),
      }),
    );
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    expect((err as Error).message).toContain('SOLA_01208');
  });

  it('a signal aborted before the call → GatewayUnreachable, nothing sent', async () => {
    const before = emu.requests();
    const ctl = new AbortController();
    ctl.abort();
    const err = await attempt(
      gw.authorize(
        { idempotencyKey: newKey(), amountMinor: 100, currency: 'USD', instrument: cc('4111111111111111') },
        { signal: ctl.signal },
      ),
    );
    expect(err).toBeInstanceOf(GatewayUnreachable);
    expect(emu.requests()).toBe(before);
  });

  it('a signal aborted while waiting → GatewayOutcomeUnknown; Sola still charged it once', async () => {
    const key = newKey();
    emu.setLatency(400);
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    const err = await attempt(
      gw.authorize(
        { idempotencyKey: key, amountMinor: 100, currency: 'USD', instrument: cc('4111111111111111') },
        { signal: ctl.signal },
      ),
    );
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    await new Promise((r) => setTimeout(r, 500));
    expect(emu.charges(solaInvoice(key))).toHaveLength(1);
  });
});

describe('transport classification with an injected fetch', () => {
  const withFetch = (f: typeof fetch) =>
    solaGateway({ key: KEY, url: 'https://sola.test/gatewayjson', fetch: f });
  const failing = (code: string, message = 'fetch failed') =>
    withFetch(async () => {
      throw Object.assign(new TypeError(message), {
        cause: Object.assign(new Error(`${code} 4111111111111111`), { code }),
      });
    });
  const answering = (status: number, body: string) => withFetch(async () => new Response(body, { status }));

  it.each(['ENOTFOUND', 'EAI_AGAIN', 'ECONNREFUSED'])('%s → GatewayUnreachable', async (code) => {
    const err = await authorize({ instrument: cc('4111111111111111') }, failing(code));
    expect(err).toBeInstanceOf(GatewayUnreachable);
    expect((err as Error).message).toContain(code);
  });

  it.each(['ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_HEADERS_TIMEOUT'])(
    '%s → GatewayOutcomeUnknown',
    async (code) => {
      expect(await authorize({ instrument: cc('4111111111111111') }, failing(code))).toBeInstanceOf(
        GatewayOutcomeUnknown,
      );
    },
  );

  it('a failure without a code (socket hang up) → GatewayOutcomeUnknown', async () => {
    const g = withFetch(async () => {
      throw new Error('socket hang up');
    });
    expect(await authorize({ instrument: cc('4111111111111111') }, g)).toBeInstanceOf(GatewayOutcomeUnknown);
  });

  it('JSON without xResult → GatewayOutcomeUnknown', async () => {
    expect(
      await authorize({ instrument: cc('4111111111111111') }, answering(200, '{"xStatus":"?"}')),
    ).toBeInstanceOf(GatewayOutcomeUnknown);
    expect(await authorize({ instrument: cc('4111111111111111') }, answering(200, '[1]'))).toBeInstanceOf(
      GatewayOutcomeUnknown,
    );
    expect(
      await authorize({ instrument: cc('4111111111111111') }, answering(503, '{"xResult":"A"}')),
    ).toBeInstanceOf(GatewayOutcomeUnknown);
  });

  it('HTTP 4xx with an xResult body is a normal result', async () => {
    const r = ok(
      await authorize(
        { instrument: cc('4111111111111111') },
        answering(400, '{"xResult":"E","xError":"Invalid Field","xErrorCode":"01234","xStatus":"Error"}'),
      ),
    );
    expect(r).toMatchObject({ status: 'Error', code: 'SOLA_01234', message: 'Invalid Field' });
  });

  it('an unmasked number in an answer is never passed on', async () => {
    const r = ok(
      await authorize(
        { instrument: cc('4111111111111111') },
        answering(200, '{"xResult":"A","xRefNum":"1","xMaskedCardNumber":"4111111111111111"}'),
      ),
    );
    expect(r.masked).toBeNull();
  });
});

describe('duplicates: what Sola does with a repeated xInvoice', () => {
  it('a repeat within the duplicate window is refused by Sola; the adapter returns the original', async () => {
    const key = newKey();
    const first = ok(await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') }));
    const second = ok(await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') }));
    expect(second).toMatchObject({ status: 'Success', gatewayRef: first.gatewayRef });
    expect(emu.charges(solaInvoice(key))).toHaveLength(1);
  });

  it('after the window Sola charges the same invoice again: why a lost answer is looked up, never resent', async () => {
    const key = newKey();
    const invoice = solaInvoice(key);
    ok(await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') }));
    clock += 11 * 60 * 1000;
    ok(await authorize({ idempotencyKey: key, instrument: cc('4111111111111111') }));
    expect(emu.charges(invoice).filter((c) => c.result === 'A')).toHaveLength(2);
    // The report shows both; lookup returns an approved one and says so.
    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'authorize',
          amountMinor: 2500,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    expect(found.status).toBe('Success');
    expect(found.message).toMatch(/2 transactions/);
  });
});

describe('refunds (cc:refund, check:refund)', () => {
  const refund = (gatewayRef: string, amountMinor: number, method: 'Credit_Card' | 'ACH', key = newKey()) =>
    attempt(gw.refund({ gatewayRef, idempotencyKey: key, amountMinor, currency: 'USD', method }));

  it('a card: cc:refund with xRefNum, xAmount #.## and xInvoice; partial refunds up to the original, no more', async () => {
    const sale = ok(await authorize({ amountMinor: 2500, instrument: cc('4111111111111111') }));
    const key = newKey();
    const r = ok(await refund(sale.gatewayRef!, 1000, 'Credit_Card', key));
    expect(r).toMatchObject({ status: 'Success', code: null });
    expect(r.gatewayRef).toMatch(/^\d+$/);
    expect(r.gatewayRef).not.toBe(sale.gatewayRef);
    const sent = lastReceived();
    expect(sent.path).toBe('/gatewayjson');
    expect(sent.fields).toEqual({
      xkey: '***',
      xversion: SOLA_API_VERSION,
      xsoftwarename: 'KupahTest',
      xsoftwareversion: '9.9.9',
      xcommand: 'cc:refund',
      xrefnum: sale.gatewayRef,
      xamount: '10.00',
      xinvoice: solaInvoice(key),
    });
    expect(ok(await refund(sale.gatewayRef!, 1500, 'Credit_Card')).status).toBe('Success');
    const over = ok(await refund(sale.gatewayRef!, 1, 'Credit_Card'));
    expect(over).toMatchObject({ status: 'Error', code: 'SOLA_ERROR' });
    expect(over.message).toMatch(/exceeds/i);
    expect(
      emu
        .refunds()
        .filter((x) => x.original === sale.gatewayRef)
        .map((x) => x.amount),
    ).toEqual(['10.00', '15.00']);
  });

  it('a bank account: check:refund with the same fields', async () => {
    const sale = ok(await authorize({ amountMinor: 4200, instrument: ach() }));
    const r = ok(await refund(sale.gatewayRef!, 4200, 'ACH'));
    expect(r.status).toBe('Success');
    expect(lastReceived().fields).toMatchObject({
      xcommand: 'check:refund',
      xrefnum: sale.gatewayRef,
      xamount: '42.00',
    });
    expect(emu.refunds().at(-1)).toMatchObject({ command: 'check:refund', original: sale.gatewayRef });
  });

  it('charity cards are not refunded by Sola: refunds() says so, refund() sends nothing', async () => {
    expect(gw.refunds('Credit_Card')).toBe(true);
    expect(gw.refunds('ACH')).toBe(true);
    expect(gw.refunds('Provider_1')).toBe(false);
    const before = emu.requests();
    const r = ok(
      await attempt(
        gw.refund({
          gatewayRef: '1',
          idempotencyKey: newKey(),
          amountMinor: 100,
          currency: 'USD',
          method: 'Provider_1',
        }),
      ),
    );
    expect(r).toMatchObject({ status: 'Error', code: 'METHOD_NOT_SUPPORTED' });
    expect(emu.requests()).toBe(before);
  });

  it('an answer lost after the refund → OutcomeUnknown; lookup (kind refund) finds exactly that refund', async () => {
    const sale = ok(await authorize({ amountMinor: 3000, instrument: cc('4111111111111111') }));
    const key = newKey();
    await emu.setFault('drop-after-processing');
    const err = await refund(sale.gatewayRef!, 700, 'Credit_Card', key);
    expect(err).toBeInstanceOf(GatewayOutcomeUnknown);
    await emu.setFault(null);
    const found = ok(
      await attempt(
        gw.lookup({
          idempotencyKey: key,
          kind: 'refund',
          amountMinor: 700,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    );
    const made = emu.refunds().filter((x) => x.invoice === solaInvoice(key));
    expect(made).toHaveLength(1);
    expect(found).toMatchObject({ status: 'Success', gatewayRef: made[0]!.refNum, message: null });
    expect(lastReceived().fields).toMatchObject({
      xcommand: 'report:all',
      xinvoice: `ai${solaInvoice(key)}`,
    });
    // The sale's own invoice is not a refund: a refund lookup of another key finds nothing.
    expect(
      await attempt(
        gw.lookup({
          idempotencyKey: newKey(),
          kind: 'refund',
          amountMinor: 700,
          currency: 'USD',
          sentAt: new Date(clock),
        }),
      ),
    ).toBeNull();
  });

  it('an unsettled sale (emulator holding settlement): the refund is refused, nothing refunded', async () => {
    const held = await startSolaEmulator({ key: KEY, now: () => clock, settleAtOnce: false });
    try {
      const g = solaGateway({ key: KEY, url: held.url });
      const sale = ok(
        await attempt(
          g.authorize({
            idempotencyKey: newKey(),
            amountMinor: 500,
            currency: 'USD',
            instrument: cc('4111111111111111'),
          }),
        ),
      );
      const r = ok(
        await attempt(
          g.refund({
            gatewayRef: sale.gatewayRef!,
            idempotencyKey: newKey(),
            amountMinor: 500,
            currency: 'USD',
            method: 'Credit_Card',
          }),
        ),
      );
      expect(r).toMatchObject({ status: 'Error', message: 'Original Transaction Not Settled' });
      expect(held.refunds()).toEqual([]);
      held.settle();
      const again = ok(
        await attempt(
          g.refund({
            gatewayRef: sale.gatewayRef!,
            idempotencyKey: newKey(),
            amountMinor: 500,
            currency: 'USD',
            method: 'Credit_Card',
          }),
        ),
      );
      expect(again.status).toBe('Success');
    } finally {
      await held.close();
    }
  });
});
