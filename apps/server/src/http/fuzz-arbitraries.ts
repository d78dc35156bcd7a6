/**
 * Generators for the External API fuzz tests (`fuzz.test.ts`): a VALID body for every endpoint,
 * and mutations that each break exactly one thing in it, paired with the answer the server owes
 * (status, error codes and the field that must be named). Mutations are plain data so that
 * fast-check prints a failing one readably.
 */
import { randomUUID } from 'node:crypto';
import { FREQUENCIES } from '@kupah/contracts';
import { isValidAbaRouting } from '@kupah/instruments';
import fc from 'fast-check';

// ---------------------------------------------------------------------------------------------
// Mutations

export type Path = readonly (string | number)[];

/** One edit: `value` set at `path`, or the key at `path` deleted. */
export type Op = { path: Path; delete: true } | { path: Path; value: unknown };

export interface Expected {
  status: 400 | 401 | 403 | 404 | 409 | 413;
  /** Acceptable `error.errorCode` values. */
  codes: readonly string[];
  /**
   * For 400: the field `error.fields` must name; every named field must be it or inside it.
   * Several: any one of them will do.
   */
  field?: string | readonly string[];
  /** Other acceptable statuses (e.g. a blank receipt number may be 400 or 404). */
  orStatus?: readonly number[];
  /** Substring the error message must contain. */
  message?: string;
}

export interface Mutation {
  label: string;
  ops: readonly Op[];
  expect: Expected;
}

export const set = (path: Path, value: unknown): Op => ({ path, value });
export const del = (path: Path): Op => ({ path, delete: true });

const VALIDATION = ['VALIDATION_FAILED'] as const;
export const invalid = (field: string | readonly string[], extra: Partial<Expected> = {}): Expected => ({
  status: 400,
  codes: VALIDATION,
  field,
  ...extra,
});

export const pathName = (p: Path): string => p.map(String).join('.');

/** A deep copy of `body` with the mutation's edits applied (intermediate objects created as needed). */
export function applyMutation<T>(body: T, m: Pick<Mutation, 'ops'>): T {
  const out = structuredClone(body) as unknown;
  for (const op of m.ops) {
    let node = out as Record<string | number, unknown>;
    for (const key of op.path.slice(0, -1)) {
      const next = node[key];
      if (next === null || typeof next !== 'object') node[key] = {};
      node = node[key] as Record<string | number, unknown>;
    }
    const last = op.path[op.path.length - 1]!;
    if ('delete' in op) delete node[last];
    else node[last] = structuredClone(op.value);
  }
  return out as T;
}

/** The value at `path` in `body` (undefined when absent). */
export function getPath(body: unknown, path: Path): unknown {
  let node = body;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[key];
  }
  return node;
}

// ---------------------------------------------------------------------------------------------
// Value generators

/** Printable ASCII text of `min`..`max` characters (repeats a short random seed; fast to build). */
export const textOfLength = (min: number, max: number) =>
  fc
    .tuple(fc.string({ minLength: 1, maxLength: 8 }), fc.integer({ min, max }))
    .map(([seed, n]) => seed.repeat(Math.ceil(n / seed.length)).slice(0, n));

const finiteDouble = fc.double({ noNaN: true, noDefaultInfinity: true });
const someNumber = fc.oneof(fc.integer(), finiteDouble);
const someObject = fc.oneof(
  fc.constant({}),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 1 }), { minKeys: 1, maxKeys: 3 }),
);
const someArray = fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 });
const someString = fc.string({ maxLength: 24 });

export type Kind = 'string' | 'amount' | 'int' | 'enum' | 'object' | 'array' | 'bool' | 'date';

/** JSON values of a type the field does not accept (null only when the field may not be null). */
export function wrongType(kind: Kind, nullable: boolean): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = (() => {
    switch (kind) {
      case 'string':
      case 'enum':
      case 'date':
        return [someNumber, fc.boolean(), someObject, someArray];
      case 'amount':
        return [fc.boolean(), someObject, someArray];
      case 'int':
        return [fc.boolean(), someObject, someArray, someString];
      case 'object':
        return [someNumber, someString, fc.boolean(), someArray];
      case 'array':
        return [someNumber, someString, fc.boolean(), someObject];
      case 'bool':
        return [someNumber, someString, someObject, someArray];
    }
  })();
  if (!nullable) options.push(fc.constant(null));
  return fc.oneof(...options);
}

const AMOUNT_TEXT = /^\d{1,7}(\.\d{1,2})?$/;

/** Amounts the decisions forbid: ≤ 0, > 1,000,000, three decimals, and texts that are not numbers. */
export const badAmount: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(0, -0.01, -1, -18, 1_000_000.01, 1_000_001, 1e7, 1e21, Number.MAX_VALUE, -Number.MAX_VALUE),
  fc.integer({ min: -1_000_000_000, max: 0 }),
  fc.double({ min: -1e12, max: -1e-3, noNaN: true }),
  fc.double({ min: 1_000_000.01, max: 1e15, noNaN: true }),
  // exactly three decimals (the third is not 0): c + d/10 cents
  fc
    .tuple(fc.integer({ min: 0, max: 99_999_999 }), fc.integer({ min: 1, max: 9 }))
    .map(([c, d]) => (c * 10 + d) / 1000),
  fc.constantFrom(
    'NaN',
    'Infinity',
    '-Infinity',
    '',
    ' ',
    'abc',
    '1e3',
    '18.',
    '.5',
    ' 18',
    '18 ',
    '+18',
    '-18',
    '0x12',
    '18,50',
    '18.505',
    '1.2.3',
    '0',
    '0.00',
    '00000000',
    '1000000.01',
    '9999999',
    'null',
    'undefined',
    '١٨',
  ),
  fc.string({ maxLength: 12 }).filter((s) => !AMOUNT_TEXT.test(s)),
);

/** A valid amount in cents (2 decimals), different from `not`. */
export const otherAmount = (not: number, max = 999_999) =>
  fc
    .integer({ min: 1, max: max * 100 })
    .map((c) => c / 100)
    .filter((v) => v !== not);

const pad2 = (n: number) => String(n).padStart(2, '0');
const daysIn = (y: number, m: number) => new Date(Date.UTC(y, m, 0)).getUTCDate();

/** Dates that are not real calendar dates, or not dates at all. */
export const impossibleDate: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2026-02-30',
    '2026-02-29',
    '2100-02-29',
    '2026-13-01',
    '2026-00-10',
    '2026-04-31',
    '2026-06-00',
    '2026-1-1',
    '26-01-01',
    '2026/01/01',
    '01/02/2026',
    '20260101',
    'garbage',
    'today',
    '',
    ' ',
    '2026-01-01T',
    '2026-01-01Z',
    '2026-02-30T10:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-01-01T10:00:00Q',
    `2026-01-01T10:00:00.${'1'.repeat(30)}Z`,
  ),
  fc
    .tuple(
      fc.integer({ min: 1900, max: 2200 }),
      fc.integer({ min: 13, max: 99 }),
      fc.integer({ min: 1, max: 28 }),
    )
    .map(([y, m, d]) => `${y}-${pad2(m)}-${pad2(d)}`),
  fc
    .tuple(
      fc.integer({ min: 1900, max: 2200 }),
      fc.integer({ min: 1, max: 12 }),
      fc.integer({ min: 0, max: 68 }),
    )
    .map(([y, m, extra]) => `${y}-${pad2(m)}-${pad2(extra === 0 ? 0 : Math.min(99, daysIn(y, m) + extra))}`),
  fc.string({ maxLength: 12 }).filter((s) => !/^\d{4}-\d{2}-\d{2}/.test(s)),
);

/** Date-times whose clock part is impossible (the date part is fine). */
export const impossibleTime: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '2026-01-01T25:00:00Z',
    '2026-01-01T10:60:00Z',
    '2026-01-01T24:30:00Z',
    '2026-01-01T99:99:99Z',
  ),
  fc
    .tuple(fc.integer({ min: 25, max: 99 }), fc.integer({ min: 0, max: 59 }))
    .map(([hh, mm]) => `2026-03-10T${pad2(hh)}:${pad2(mm)}:00Z`),
);

const GUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/** Strings that are not GUIDs (some derived from the real org GUID). */
export const badGuid = (real: string): fc.Arbitrary<string> =>
  fc.oneof(
    fc.constantFrom(
      '',
      ' ',
      'not-a-guid',
      real.slice(1),
      `${real}0`,
      `{${real}}`,
      real.replaceAll('-', ''),
      `${real.slice(0, 8)}g${real.slice(9)}`,
      ` ${real}`,
      `${real} `,
      `urn:uuid:${real}`,
      '00000000-0000-0000-0000-00000000000',
    ),
    fc.string({ maxLength: 40 }).filter((s) => !GUID_RE.test(s)),
  );

/** A valid GUID that is not `real` (another organisation's, or nobody's). */
export const otherGuid = (real: string) => fc.uuid().filter((g) => g.toLowerCase() !== real.toLowerCase());

/** Strings outside an enum (also the near misses: case, spaces, aliases of other fields). */
export const unknownEnum = (allowed: readonly string[], nearMisses: readonly string[]) =>
  fc.oneof(
    fc.constantFrom(...nearMisses),
    fc.string({ maxLength: 16 }).filter((s) => !allowed.includes(s)),
  );

export const CURRENCY_INPUTS = ['USD', 'ILS', 'EUR', 'GBP', 'CAD', 'CA'] as const;
export const METHOD_INPUTS = [
  'Credit_Card',
  'Credit Card',
  'ACH',
  'Provider_1',
  'Provider_2',
  'Provider_3',
  'Provider_4',
] as const;
export const FREQUENCY_INPUTS = FREQUENCIES;

export const badCurrency = unknownEnum(CURRENCY_INPUTS, [
  'usd',
  'Usd',
  'USD ',
  ' USD',
  'US',
  'NIS',
  'CA$',
  'CAN',
  'XXX',
  'BTC',
  '',
]);
export const badMethod = unknownEnum(METHOD_INPUTS, [
  'Cash',
  'Check',
  'credit_card',
  'CREDIT_CARD',
  'Credit  Card',
  'CreditCard',
  'Credit_Card ',
  'ach',
  'Provider_0',
  'Provider_5',
  'Provider 1',
  '',
]);
export const badFrequency = unknownEnum(FREQUENCY_INPUTS, [
  'monthly',
  'MONTHLY',
  'Monthly ',
  'Biweekly',
  'Every_2nd_week',
  'Every_5th_week',
  'Hebrew_Monthly',
  'Special Days',
  'Yearly',
  '',
]);

/** Strings that are not e-mail addresses (nor empty, which means "delete"). */
export const badEmail = fc.oneof(
  fc.constantFrom(
    'not-an-email',
    'a@',
    '@example.com',
    'a b@example.com',
    'a@@example.com',
    'a@example',
    ' ',
  ),
  fc.string({ minLength: 1, maxLength: 20 }).filter((s) => !s.includes('@')),
);

// ---------------------------------------------------------------------------------------------
// Instruments

export interface Seeds {
  orgGuid: string;
  /** Card expiry MM/YY about three years ahead of the harness clock. */
  goodExpiry: string;
  /** The harness clock's year. */
  year: number;
  donorId: string;
  collectorId: string;
  /** A reason not locked to any campaign (never updated by the fuzzing). */
  reasonNum: number;
  /** A reason the SaveReason bases may update. */
  spareReasonNum: number;
  /** A reason locked to `campaignNum`. */
  lockedReasonNum: number;
  campaignNum: number;
  successReceipt: string;
  declinedReceipt: string;
  /** A Success payment and a collector of another organisation. */
  otherOrgReceipt: string;
  otherOrgCollectorId: string;
  /** uniqueTransactionIds already used, by Charge and by SchedulePayment. */
  chargeKey: string;
  chargeGuidKey: string;
  scheduleKey: string;
  /** Civil dates in the org's time zone. */
  today: string;
  futureStart: string;
  pastDate: string;
}

const CARDS = [
  { ccNum: '4242424242424242', cvv: '123', cvvSize: 3 },
  { ccNum: '4111 1111 1111 1111', cvv: '999', cvvSize: 3 },
  { ccNum: '5555555555554444', cvv: '321', cvvSize: 3 },
  { ccNum: '378282246310005', cvv: '1234', cvvSize: 4 },
] as const;
const ROUTINGS = ['021000021', '011000015', '121000358'] as const;

export type MethodVariant = 'Credit_Card' | 'ACH' | 'Provider';

export interface Instrument {
  variant: MethodVariant;
  paymentMethodId: string;
  fields: Record<string, unknown>;
  cvvSize: number;
}

export const instrument = (s: Seeds): fc.Arbitrary<Instrument> =>
  fc.oneof(
    fc
      .record({ card: fc.constantFrom(...CARDS), name: fc.constantFrom('Credit_Card', 'Credit Card') })
      .map(({ card, name }) => ({
        variant: 'Credit_Card' as const,
        paymentMethodId: name,
        cvvSize: card.cvvSize,
        fields: {
          card: { ccNum: card.ccNum, expiry: s.goodExpiry, cvv: card.cvv, cardHolderName: 'Sarah Levi' },
        },
      })),
    fc
      .record({
        routingNum: fc.constantFrom(...ROUTINGS),
        accountNum: fc.constantFrom('12345678', '000123456789', '4444'),
      })
      .map(({ routingNum, accountNum }) => ({
        variant: 'ACH' as const,
        paymentMethodId: 'ACH',
        cvvSize: 0,
        fields: {
          bankAccount: {
            accountNum,
            routingNum,
            accountType: 'Checking',
            checkType: 'Personal',
            nameOnAccount: 'Sarah Levi',
          },
        },
      })),
    fc.integer({ min: 1, max: 4 }).map((n) => ({
      variant: 'Provider' as const,
      paymentMethodId: `Provider_${n}`,
      cvvSize: 0,
      fields: { card: { ccNum: `600${n}000000000001` } },
    })),
  );

/** A valid ABA routing number with its last digit changed (the check digit then fails). */
const badChecksumRouting = fc
  .tuple(fc.constantFrom(...ROUTINGS), fc.integer({ min: 1, max: 9 }))
  .map(([r, k]) => `${r.slice(0, 8)}${(Number(r[8]) + k) % 10}`);

const badRouting = fc.oneof(
  badChecksumRouting,
  fc.constantFrom('12345678', '1234567890', 'abcdefghi', '000000000', '0210-0002', '02100002x'),
  fc.stringMatching(/^\d{9}$/).filter((r) => !isValidAbaRouting(r)),
);

/** A Luhn-valid 16-digit Visa number with its last digit changed. */
const luhnFail = fc
  .tuple(
    fc.constantFrom('4242424242424242', '5555555555554444', '4111111111111111'),
    fc.integer({ min: 1, max: 9 }),
  )
  .map(([n, k]) => `${n.slice(0, 15)}${(Number(n[15]) + k) % 10}`);

/** Instrument mutations for the base's payment method. */
export function instrumentMutations(s: Seeds, inst: Instrument): fc.Arbitrary<Mutation>[] {
  const out: fc.Arbitrary<Mutation>[] = [];
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  if (inst.variant === 'Credit_Card') {
    out.push(
      fc.constant(m('delete card', [del(['card'])], invalid('card.ccNum'))),
      fc.constant(m('card null', [set(['card'], null)], invalid('card.ccNum'))),
      fc.constantFrom(
        m('delete card.ccNum', [del(['card', 'ccNum'])], invalid('card.ccNum')),
        m('card.ccNum empty', [set(['card', 'ccNum'], '')], invalid('card.ccNum')),
        m('delete card.expiry', [del(['card', 'expiry'])], invalid('card.expiry')),
        m('delete card.cvv', [del(['card', 'cvv'])], invalid('card.cvv')),
        m('card.cvv empty', [set(['card', 'cvv'], '')], invalid('card.cvv')),
      ),
      luhnFail.map((n) => m('card.ccNum fails Luhn', [set(['card', 'ccNum'], n)], invalid('card.ccNum'))),
      fc
        .oneof(
          fc.constantFrom(
            '4242',
            '42424242424',
            '42424242424242424242',
            '9999999999999995',
            '0000000000000000',
          ),
          fc.stringMatching(/^[a-zA-Z][a-zA-Z0-9 ]{11,18}$/),
        )
        .map((n) => m('card.ccNum not a card number', [set(['card', 'ccNum'], n)], invalid('card.ccNum'))),
      fc
        .tuple(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 2000, max: s.year - 1 }))
        .map(([mm, yy]) =>
          m(
            'card expired',
            [set(['card', 'expiry'], `${pad2(mm)}/${pad2(yy % 100)}`)],
            invalid('card.expiry'),
          ),
        ),
      fc
        .oneof(
          fc.constantFrom('13/30', '00/30', 'ab/cd', '1/2', '12/3', '12/300', '12-', '/', '1230x', '99/99'),
          fc.integer({ min: s.year + 21, max: 2099 }).map((y) => `12/${y}`),
        )
        .map((e) => m('card.expiry invalid', [set(['card', 'expiry'], e)], invalid('card.expiry'))),
      fc
        .oneof(
          fc.constantFrom('1', '12a', 'abc', '1 2 3', '-12'),
          fc.stringMatching(/^\d{1,8}$/).filter((c) => c.length !== inst.cvvSize),
        )
        .map((c) => m('card.cvv invalid', [set(['card', 'cvv'], c)], invalid('card.cvv'))),
      fc.constant(m('ACH without bankAccount', [set(['paymentMethodId'], 'ACH')], invalid('bankAccount'))),
    );
  } else if (inst.variant === 'ACH') {
    out.push(
      fc.constantFrom(
        m('delete bankAccount', [del(['bankAccount'])], invalid('bankAccount')),
        m('bankAccount null', [set(['bankAccount'], null)], invalid('bankAccount')),
        m('delete routingNum', [del(['bankAccount', 'routingNum'])], invalid('bankAccount.routingNum')),
        m('delete accountNum', [del(['bankAccount', 'accountNum'])], invalid('bankAccount.accountNum')),
        m('card method without card', [set(['paymentMethodId'], 'Credit_Card')], invalid('card.ccNum')),
        m('charity method without card', [set(['paymentMethodId'], 'Provider_2')], invalid('card.ccNum')),
      ),
      badRouting.map((r) =>
        m('bad ABA routing', [set(['bankAccount', 'routingNum'], r)], invalid('bankAccount.routingNum')),
      ),
      fc
        .oneof(
          fc.constantFrom('123', '1', 'abcd', '123456789012345678', '12x45'),
          fc.stringMatching(/^\d{18,30}$/),
        )
        .map((a) =>
          m('bad account number', [set(['bankAccount', 'accountNum'], a)], invalid('bankAccount.accountNum')),
        ),
      fc
        .constantFrom('Gold', 'Check', 'Credit', 'Savings Account', 'x')
        .map((t) =>
          m('bad accountType', [set(['bankAccount', 'accountType'], t)], invalid('bankAccount.accountType')),
        ),
      fc
        .constantFrom('Corporate', 'Private', 'x', 'Business Personal')
        .map((t) =>
          m('bad checkType', [set(['bankAccount', 'checkType'], t)], invalid('bankAccount.checkType')),
        ),
    );
  } else {
    out.push(
      fc.constantFrom(
        m('delete card', [del(['card'])], invalid('card.ccNum')),
        m('delete card.ccNum', [del(['card', 'ccNum'])], invalid('card.ccNum')),
        m('card.ccNum blank', [set(['card', 'ccNum'], '   ')], invalid('card.ccNum')),
        m('ACH without bankAccount', [set(['paymentMethodId'], 'ACH')], invalid('bankAccount')),
      ),
      fc
        .oneof(
          fc.constantFrom(
            'abc',
            '1234567',
            '12345678901234567890',
            'tok_short',
            `tok_${'a'.repeat(65)}`,
            'tok_a b c d e f g h',
          ),
          fc.stringMatching(/^\d{1,7}$/),
          fc.stringMatching(/^\d{20,60}$/),
        )
        .map((n) => m('bad charity card', [set(['card', 'ccNum'], n)], invalid('card.ccNum'))),
    );
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Field tables: generic mutations (delete, wrong type, too long) derived from each field's kind

export interface FieldSpec {
  path: Path;
  kind: Kind;
  /** Deleting the key is an error naming this field (default: not required). */
  deleteField?: string;
  /** null is not accepted. */
  notNull?: boolean;
  /** Maximum length (strings). */
  max?: number;
  /** Minimum value (ints). */
  min?: number;
  /** Extra bad values for this field (beyond wrong types and over-long strings). */
  bad?: fc.Arbitrary<unknown>;
  /** Field the server names (default: the path). */
  field?: string;
}

export function fieldMutations(specs: readonly FieldSpec[]): fc.Arbitrary<Mutation>[] {
  const out: fc.Arbitrary<Mutation>[] = [];
  for (const f of specs) {
    const name = f.field ?? pathName(f.path);
    if (f.deleteField) {
      out.push(
        fc.constant({
          label: `delete ${pathName(f.path)}`,
          ops: [del(f.path)],
          expect: invalid(f.deleteField),
        }),
      );
    }
    out.push(
      wrongType(f.kind, !f.notNull).map((v) => ({
        label: `wrong type at ${pathName(f.path)}`,
        ops: [set(f.path, v)],
        expect: invalid(name),
      })),
    );
    if (f.kind === 'string' && f.max !== undefined) {
      out.push(
        textOfLength(f.max + 1, f.max + 400).map((v) => ({
          label: `${pathName(f.path)} over ${f.max} characters`,
          ops: [set(f.path, v)],
          expect: invalid(name),
        })),
      );
    }
    if (f.kind === 'int') {
      const min = f.min ?? 0;
      out.push(
        fc
          .oneof(
            fc.integer({ min: -2_000_000_000, max: min - 1 }),
            fc.constantFrom(2 ** 31, 2 ** 53, 1e21, min - 0.5, min + 0.5, 1.5, -1.5),
            finiteDouble.filter((v) => !(Number.isInteger(v) && v >= min && v <= 2 ** 31 - 1)),
          )
          .map((v) => ({
            label: `${pathName(f.path)} out of range`,
            ops: [set(f.path, v)],
            expect: invalid(name),
          })),
      );
    }
    if (f.kind === 'amount') {
      out.push(
        badAmount.map((v) => ({
          label: `bad amount at ${pathName(f.path)}`,
          ops: [set(f.path, v)],
          expect: invalid(name),
        })),
      );
    }
    if (f.bad) {
      out.push(
        f.bad.map((v) => ({
          label: `bad value at ${pathName(f.path)}`,
          ops: [set(f.path, v)],
          expect: invalid(name),
        })),
      );
    }
  }
  return out;
}

const text = (path: Path, max = 256): FieldSpec => ({ path, kind: 'string', max });

// ---------------------------------------------------------------------------------------------
// Charge and SchedulePayment

type Body = Record<string, unknown>;

export interface Base {
  body: Body;
  /** Spelling of the org key in this body. */
  orgKey: string;
  inst?: Instrument;
}

const suffix = fc.stringMatching(/^[a-z0-9]{6,10}$/);

/** Donor, campaign, reasons split and collector: all resolved (and partly created) inside the transaction. */
const parties = (s: Seeds, tag: string, amounts: [number, number]) => ({
  donor: {
    firstName: 'Fuzz',
    lastName: `Donor ${tag}`,
    phoneNumber: '555-0100',
    email: `fuzz.${tag}@example.com`,
  },
  campaign: { campaignName: `Fuzz campaign ${tag}` },
  reasons: [
    { reasonAmount: amounts[0], reasonName: `Fuzz reason ${tag}` },
    { reasonAmount: amounts[1], reasonNum: s.reasonNum },
  ],
  collectorId: s.collectorId,
});

const deviceInfo = {
  deviceName: 'Fuzz terminal',
  timezone: 'America/New_York',
  deviceCreatedDate: '2026-11-20T08:30:00Z',
  location: { locationName: 'Main shul', longitude: '-73.95', latitude: 40.71 },
};

// The bases' uniqueTransactionIds carry a mark, and `withFreshKey` gives every request a new one:
// a key reused across runs (fc.uuid's bias; shrinking keeps the base while shrinking the fault)
// would be answered 409 before the fault under test is reached.
const CHARGE_KEY = 'fuzz-';
const SCHEDULE_KEY = 'f0220000-';
const newChargeKey = () => `${CHARGE_KEY}${randomUUID()}`;
const newScheduleKey = () => `${SCHEDULE_KEY}${randomUUID().slice(9)}`;

/** `body` with a new uniqueTransactionId when it has a base's (marked) one; other values are kept. */
export function withFreshKey(body: unknown): unknown {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
  const key = (body as Body).uniqueTransactionId;
  if (typeof key !== 'string') return body;
  // only an intact mark is replaced: a mutated key (e.g. one with U+0000 inserted) stays as it is
  const tail = '[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}';
  if (new RegExp(`^${CHARGE_KEY}[0-9a-f]{8}-${tail}$`).test(key)) {
    return { ...body, uniqueTransactionId: newChargeKey() };
  }
  if (new RegExp(`^${SCHEDULE_KEY}${tail}$`).test(key))
    return { ...body, uniqueTransactionId: newScheduleKey() };
  return body;
}

export const chargeBase = (s: Seeds): fc.Arbitrary<Base> =>
  fc
    .record({
      inst: instrument(s),
      orgKey: fc.constantFrom('orgGUID', 'orgGuid'),
      currency: fc.constantFrom('USD', 'ILS', 'EUR', 'CAD', 'CA'),
      tag: suffix,
      withDevice: fc.boolean(),
    })
    .map(({ inst, orgKey, currency, tag, withDevice }) => ({
      orgKey,
      inst,
      body: {
        [orgKey]: s.orgGuid,
        amount: 18,
        paymentMethodId: inst.paymentMethodId,
        uniqueTransactionId: newChargeKey(),
        currency,
        note: 'Fuzz note',
        paymentDate: '2026-11-20T08:30:00Z',
        ...parties(s, tag, [10, 8]),
        isAnonymousDonation: false,
        ...(withDevice ? { deviceInfo } : {}),
        ...inst.fields,
      },
    }));

export const scheduleBase = (s: Seeds): fc.Arbitrary<Base> =>
  fc
    .record({
      inst: instrument(s),
      orgKey: fc.constantFrom('orgGUID', 'orgGuid'),
      currency: fc.constantFrom('USD', 'ILS', 'EUR', 'CAD', 'CA'),
      tag: suffix,
      frequencyID: fc.constantFrom('Monthly', 'Weekly', 'Monthly_Hebrew', 'Every_2nd_month', 'Annually'),
      // a quarter start today: the first payment is then charged in the same transaction
      startDate: fc.constantFrom(s.futureStart, s.futureStart, s.futureStart, s.today),
    })
    .map(({ inst, orgKey, currency, tag, frequencyID, startDate }) => ({
      orgKey,
      inst,
      body: {
        [orgKey]: s.orgGuid,
        amount: 120,
        paymentMethodId: inst.paymentMethodId,
        uniqueTransactionId: newScheduleKey(),
        currency,
        note: 'Fuzz schedule',
        ...parties(s, tag, [6, 4]),
        scheduleDetails: {
          frequencyID,
          startDate,
          totalPaymentsCount: 12,
          amountPerPayment: 10,
          firstPaymentAmount: 10,
        },
        ...inst.fields,
      },
    }));

/** Fields and cross-field rules common to Charge and SchedulePayment. */
function paymentMutations(s: Seeds, base: Base, op: 'Charge' | 'SchedulePayment'): fc.Arbitrary<Mutation>[] {
  const { orgKey } = base;
  const otherKey = orgKey === 'orgGUID' ? 'orgGuid' : 'orgGUID';
  const inst = base.inst!;
  const cardSpecs: FieldSpec[] =
    inst.variant === 'ACH'
      ? [
          { path: ['bankAccount'], kind: 'object', field: 'bankAccount' },
          ...['accountNum', 'accountType', 'checkType', 'nameOnAccount', 'routingNum'].map((k) =>
            text(['bankAccount', k]),
          ),
        ]
      : [
          { path: ['card'], kind: 'object' },
          text(['card', 'ccNum'], 80),
          ...(inst.variant === 'Credit_Card'
            ? [text(['card', 'expiry'], 10), text(['card', 'cvv'], 8), text(['card', 'cardHolderName'])]
            : []),
        ];
  const specs: FieldSpec[] = [
    { path: [orgKey], kind: 'string', notNull: true, deleteField: 'orgGUID', bad: badGuid(s.orgGuid) },
    {
      path: ['paymentMethodId'],
      kind: 'enum',
      notNull: true,
      deleteField: 'paymentMethodId',
      bad: badMethod,
    },
    { path: ['currency'], kind: 'enum', notNull: true, deleteField: 'currency', bad: badCurrency },
    { path: ['note'], kind: 'string', max: 2000 },
    { path: ['paymentDate'], kind: 'date', bad: fc.oneof(impossibleDate, impossibleTime) },
    { path: ['donor'], kind: 'object' },
    ...['firstName', 'lastName', 'phoneNumber', 'email', 'accountNum', 'firstNameHebrew'].map((k) =>
      text(['donor', k]),
    ),
    { path: ['campaign'], kind: 'object' },
    text(['campaign', 'campaignName']),
    { path: ['campaign', 'campaignNum'], kind: 'int', min: 1 },
    { path: ['reasons'], kind: 'array' },
    { path: ['reasons', 0], kind: 'object', notNull: true },
    {
      path: ['reasons', 0, 'reasonAmount'],
      kind: 'amount',
      notNull: true,
      deleteField: 'reasons.0.reasonAmount',
    },
    text(['reasons', 0, 'reasonName']),
    { path: ['reasons', 1, 'reasonNum'], kind: 'int', min: 1, field: 'reasons.1.reasonNum' },
    { path: ['reason'], kind: 'object' },
    text(['collectorId']),
    { path: ['isAnonymousDonation'], kind: 'bool' },
    { path: ['deviceInfo'], kind: 'object' },
    text(['deviceInfo', 'deviceName']),
    text(['deviceInfo', 'timezone']),
    {
      path: ['deviceInfo', 'deviceCreatedDate'],
      kind: 'date',
      bad: fc.oneof(impossibleDate, impossibleTime),
    },
    { path: ['deviceInfo', 'location'], kind: 'object' },
    text(['deviceInfo', 'location', 'locationName']),
    ...cardSpecs,
  ];
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  const reasonName0 = getPath(base.body, ['reasons', 0, 'reasonName']);
  const firstAmount = op === 'Charge' ? 18 : 10;
  const split0 = op === 'Charge' ? 10 : 6;
  return [
    ...fieldMutations(specs),
    ...instrumentMutations(s, inst),
    otherGuid(s.orgGuid).map((g) =>
      m('orgGUID and orgGuid differ', [set([otherKey], g)], invalid('orgGUID')),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('another organisation', [set([orgKey], g)], { status: 403, codes: ['FORBIDDEN'] }),
    ),
    fc.constant(
      m('currency not enabled for the org', [set(['currency'], 'GBP')], {
        ...invalid('currency'),
        codes: ['CURRENCY_NOT_ENABLED'],
      }),
    ),
    // reasons: split not adding up, both reason and reasons, too many, unknown / duplicate / locked
    otherAmount(split0, 1000).map((a) =>
      m('reasons do not add up', [set(['reasons', 0, 'reasonAmount'], a)], invalid('reasons')),
    ),
    fc.constant(m('reason and reasons', [set(['reason'], { reasonNum: s.reasonNum })], invalid('reasons'))),
    fc.integer({ min: 21, max: 40 }).map((n) =>
      m(
        `${n} reasons`,
        [
          set(
            ['reasons'],
            Array.from({ length: n }, (_, i) => ({ reasonAmount: 1, reasonName: `r${i}` })),
          ),
        ],
        invalid('reasons'),
      ),
    ),
    fc.constant(
      m(
        'reason without number or name',
        [set(['reasons', 1], { reasonAmount: firstAmount - split0 })],
        invalid('reasons.1.reasonNum'),
      ),
    ),
    fc
      .integer({ min: 900_000, max: 2 ** 31 - 1 })
      .map((n) =>
        m('unknown reasonNum', [set(['reasons', 1, 'reasonNum'], n)], invalid('reasons.1.reasonNum')),
      ),
    fc.constant(
      m(
        'same reason twice (by name)',
        [set(['reasons', 1], { reasonAmount: firstAmount - split0, reasonName: reasonName0 })],
        invalid('reasons.1'),
      ),
    ),
    fc.constant(
      m(
        'same reason twice (by number)',
        [set(['reasons', 0, 'reasonNum'], s.reasonNum)],
        invalid('reasons.1'),
      ),
    ),
    fc.constant(
      m(
        'reason locked to another campaign',
        [set(['reasons', 1, 'reasonNum'], s.lockedReasonNum)],
        invalid('reasons.1.reasonNum'),
      ),
    ),
    fc.constant(
      m(
        'single reason locked to another campaign',
        [del(['reasons']), set(['reason'], { reasonNum: s.lockedReasonNum })],
        invalid('reason.reasonNum'),
      ),
    ),
    fc
      .integer({ min: 900_000, max: 2 ** 31 - 1 })
      .map((n) =>
        m('unknown campaignNum', [set(['campaign'], { campaignNum: n })], invalid('campaign.campaignNum')),
      ),
    fc.constant(
      m(
        'collector of another organisation',
        [set(['collectorId'], s.otherOrgCollectorId)],
        invalid('collectorId'),
      ),
    ),
    fc
      .constantFrom('C999999999', s.otherOrgCollectorId)
      .map((c) => m('collectorId and collectorID differ', [set(['collectorID'], c)], invalid('collectorId'))),
    fc
      .oneof(
        fc.stringMatching(/^C9\d{6,12}$/),
        fc
          .string({ minLength: 1, maxLength: 30 })
          .filter((c) => c.trim() !== '' && !/^C\d+$/i.test(c.trim())),
      )
      .map((c) => m('unknown collector', [set(['collectorId'], c)], invalid('collectorId'))),
    // donor: incomplete names, unknown or malformed account numbers
    fc
      .constantFrom(
        { firstName: 'Only' },
        { lastName: 'Only' },
        { firstName: 'Half', lastNameHebrew: 'חצי' },
        { phoneNumber: '555-0199' },
        { firstName: '  ', lastName: 'Blank' },
      )
      .map((d) => m('donor without a name pair', [set(['donor'], d)], invalid('donor.firstName'))),
    fc
      .oneof(
        fc.stringMatching(/^D9\d{8,16}$/).map((a) => ({ accountNum: a })),
        fc
          .constantFrom('Q123', 'D', 'D12x', '123456', 'C1001')
          .map((a) => ({ accountNum: a, firstName: 'A', lastName: 'B' })),
      )
      .map((d) => m('donor account unknown', [set(['donor'], d)], invalid('donor.accountNum'))),
  ];
}

export function chargeMutations(s: Seeds, base: Base): fc.Arbitrary<Mutation> {
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  return fc.oneof(
    ...paymentMutations(s, base, 'Charge'),
    ...fieldMutations([
      { path: ['amount'], kind: 'amount', notNull: true, deleteField: 'amount' },
      {
        path: ['uniqueTransactionId'],
        kind: 'string',
        notNull: true,
        max: 256,
        deleteField: 'uniqueTransactionId',
      },
    ]),
    fc.constant(
      m('uniqueTransactionId empty', [set(['uniqueTransactionId'], '')], invalid('uniqueTransactionId')),
    ),
    fc.constantFrom(s.chargeKey, s.chargeGuidKey, s.scheduleKey).map((k) =>
      m('uniqueTransactionId already used', [set(['uniqueTransactionId'], k)], {
        status: 409,
        codes: ['DUPLICATE_TRANSACTION'],
      }),
    ),
  );
}

export function scheduleMutations(s: Seeds, base: Base): fc.Arbitrary<Mutation> {
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  const sd = (k: string): Path => ['scheduleDetails', k];
  return fc.oneof(
    ...paymentMutations(s, base, 'SchedulePayment'),
    ...fieldMutations([
      { path: ['amount'], kind: 'amount' },
      {
        path: ['uniqueTransactionId'],
        kind: 'string',
        notNull: true,
        deleteField: 'uniqueTransactionId',
        bad: badGuid(s.orgGuid),
      },
      { path: ['scheduleDetails'], kind: 'object', notNull: true, deleteField: 'scheduleDetails' },
      { path: sd('amountPerPayment'), kind: 'amount' },
      { path: sd('firstPaymentAmount'), kind: 'amount' },
      {
        path: sd('frequencyID'),
        kind: 'enum',
        notNull: true,
        deleteField: 'scheduleDetails.frequencyID',
        bad: badFrequency,
      },
      {
        path: sd('startDate'),
        kind: 'date',
        notNull: true,
        deleteField: 'scheduleDetails.startDate',
        bad: impossibleDate,
      },
      { path: sd('totalPaymentsCount'), kind: 'int', min: 1 },
      { path: sd('specialDays'), kind: 'object' },
      {
        path: sd('anniversaryRule'),
        kind: 'enum',
        bad: fc.constantFrom('Yahrzeit', 'birthday', '', 'anniversary '),
      },
    ]),
    fc
      .integer({ min: 1001, max: 1_000_000 })
      .map((n) =>
        m(
          'more than 1000 payments',
          [set(sd('totalPaymentsCount'), n)],
          invalid('scheduleDetails.totalPaymentsCount'),
        ),
      ),
    fc.constant(
      m('no payments', [set(sd('totalPaymentsCount'), 0)], invalid('scheduleDetails.totalPaymentsCount')),
    ),
    fc.constant(
      m('start date in the past', [set(sd('startDate'), s.pastDate)], invalid('scheduleDetails.startDate')),
    ),
    // amounts that do not add up: total ≠ first + per × (count − 1)
    otherAmount(120, 100_000).map((a) => m('total inconsistent', [set(['amount'], a)], invalid('amount'))),
    otherAmount(10, 1000).map((a) =>
      m('per-payment inconsistent', [set(sd('amountPerPayment'), a)], invalid('amount')),
    ),
    otherAmount(10, 1000).map((a) =>
      m('first payment inconsistent', [set(sd('firstPaymentAmount'), a)], invalid('amount')),
    ),
    fc
      .integer({ min: 1, max: 1000 })
      .filter((n) => n !== 12)
      .map((n) => m('count inconsistent', [set(sd('totalPaymentsCount'), n)], invalid('amount'))),
    fc.constant(
      m(
        'no amounts at all',
        [del(['amount']), del(sd('amountPerPayment')), del(sd('firstPaymentAmount'))],
        invalid('scheduleDetails.amountPerPayment'),
      ),
    ),
    fc.constant(
      m(
        'no count and no total',
        [del(['amount']), del(sd('totalPaymentsCount'))],
        invalid('scheduleDetails.totalPaymentsCount'),
      ),
    ),
    fc.constant(
      m(
        'split across reasons with unequal payments',
        [set(sd('firstPaymentAmount'), 20), set(['amount'], 130), set(['reasons', 0, 'reasonAmount'], 16)],
        invalid('reasons'),
      ),
    ),
    // Special_Days needs presets and/or dates
    fc
      .constantFrom(undefined, null, {}, { presets: [], dates: [] }, { presets: null, dates: null })
      .map((v) =>
        m(
          'Special_Days without specialDays',
          [
            set(sd('frequencyID'), 'Special_Days'),
            v === undefined ? del(sd('specialDays')) : set(sd('specialDays'), v),
          ],
          invalid('scheduleDetails.specialDays'),
        ),
      ),
    fc
      .constantFrom('shabbat', 'Erev_Shabbat', 'purim ', '', 'yom_kippur')
      .map((p) =>
        m(
          'unknown special-day preset',
          [set(sd('frequencyID'), 'Special_Days'), set(sd('specialDays'), { presets: [p] })],
          invalid('scheduleDetails.specialDays.presets.0'),
        ),
      ),
    fc
      .integer({ min: 21, max: 30 })
      .map((n) =>
        m(
          'too many presets',
          [
            set(sd('frequencyID'), 'Special_Days'),
            set(sd('specialDays'), { presets: Array(n).fill('purim') }),
          ],
          invalid('scheduleDetails.specialDays.presets'),
        ),
      ),
    impossibleDate.map((d) =>
      m(
        'impossible special date',
        [set(sd('frequencyID'), 'Special_Days'), set(sd('specialDays'), { dates: [d] })],
        invalid('scheduleDetails.specialDays.dates.0'),
      ),
    ),
    fc.constantFrom(s.scheduleKey, s.chargeGuidKey, s.scheduleKey.toUpperCase()).map((k) =>
      m('uniqueTransactionId already used', [set(['uniqueTransactionId'], k)], {
        status: 409,
        codes: ['DUPLICATE_TRANSACTION'],
      }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// VoidPayment

export const voidBase = (s: Seeds): fc.Arbitrary<Base> =>
  fc.constantFrom('orgGUID', 'orgGuid').map((orgKey) => ({
    orgKey,
    body: { [orgKey]: s.orgGuid, receiptNum: s.successReceipt, reason: 'Fuzz: donor changed their mind' },
  }));

export function voidMutations(s: Seeds, base: Base): fc.Arbitrary<Mutation> {
  const { orgKey } = base;
  const otherKey = orgKey === 'orgGUID' ? 'orgGuid' : 'orgGUID';
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  return fc.oneof(
    ...fieldMutations([
      { path: [orgKey], kind: 'string', notNull: true, deleteField: 'orgGUID', bad: badGuid(s.orgGuid) },
      { path: ['receiptNum'], kind: 'string', notNull: true, max: 256, deleteField: 'receiptNum' },
      { path: ['reason'], kind: 'string', max: 2000 },
    ]),
    fc.constant(m('receiptNum empty', [set(['receiptNum'], '')], invalid('receiptNum'))),
    fc
      .constantFrom(' ', '   ', '\t')
      .map((r) =>
        m('receiptNum blank', [set(['receiptNum'], r)], { ...invalid('receiptNum'), orStatus: [404] }),
      ),
    fc
      .oneof(fc.stringMatching(/^R9\d{8,14}$/), fc.stringMatching(/^[A-QS-Z]{1,3}\d{1,10}$/))
      .map((r) => m('unknown receipt', [set(['receiptNum'], r)], { status: 404, codes: ['NOT_FOUND'] })),
    fc.constant(
      m('receipt of a declined payment', [set(['receiptNum'], s.declinedReceipt)], {
        status: 409,
        codes: ['INVALID_STATE'],
      }),
    ),
    fc.constant(
      m('receipt of another organisation', [set(['receiptNum'], s.otherOrgReceipt)], {
        status: 404,
        codes: ['NOT_FOUND'],
      }),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('orgGUID and orgGuid differ', [set([otherKey], g)], invalid('orgGUID')),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('another organisation', [set([orgKey], g)], { status: 403, codes: ['FORBIDDEN'] }),
    ),
  );
}

// ---------------------------------------------------------------------------------------------
// SaveDonor / SaveCollector

export type PersonKind = 'donor' | 'collector';

export interface PersonBase extends Base {
  kind: PersonKind;
  idKey: string;
  /** The id sent: '' (create), an existing record's, or (donors) a new valid one. */
  mode: 'create' | 'update' | 'create-with-id';
}

const phone = { phoneLabel: 'Cell', phoneNumber: '555-0100', countryCode: '1' };
const email = { emailLabel: 'Home', emailAddress: 'fuzz@example.com' };
const address = {
  addressLabel: 'Home',
  careOf: 'c/o',
  houseNum: '12',
  streetName: 'Main St',
  unit: '3',
  city: 'Brooklyn',
  state: 'NY',
  zip: '11230',
  country: 'US',
};

export const personBase = (s: Seeds, kind: PersonKind): fc.Arbitrary<PersonBase> =>
  fc
    .record({
      orgKey: fc.constantFrom('orgGuid', 'orgGUID'),
      idKey: fc.constantFrom(
        kind === 'donor' ? 'donorID' : 'collectorID',
        kind === 'donor' ? 'donorId' : 'collectorId',
      ),
      mode:
        kind === 'donor'
          ? fc.constantFrom('create', 'update', 'create-with-id')
          : fc.constantFrom('create', 'update'),
      newId: fc.stringMatching(/^D8\d{10,14}$/),
      tag: suffix,
    })
    .map(({ orgKey, idKey, mode, newId, tag }) => {
      const id =
        mode === 'create' ? '' : mode === 'update' ? (kind === 'donor' ? s.donorId : s.collectorId) : newId;
      return {
        kind,
        orgKey,
        idKey,
        mode: mode as PersonBase['mode'],
        body: {
          [orgKey]: s.orgGuid,
          [idKey]: id,
          title: 'Mrs.',
          firstName: 'Fuzz',
          lastName: `Person ${tag}`,
          titleHebrew: 'גב׳',
          firstNameHebrew: 'פוז',
          lastNameHebrew: 'בדיקה',
          suffixHebrew: 'שליט"א',
          [`${kind}Phones`]: [phone],
          [`${kind}Emails`]: [email],
          [`${kind}Addresses`]: [address],
        },
      };
    });

export function personMutations(s: Seeds, base: PersonBase): fc.Arbitrary<Mutation> {
  const { orgKey, idKey, kind, mode } = base;
  const idA = kind === 'donor' ? 'donorID' : 'collectorID';
  const idB = kind === 'donor' ? 'donorId' : 'collectorId';
  const otherKey = orgKey === 'orgGuid' ? 'orgGUID' : 'orgGuid';
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  const P = `${kind}Phones`;
  const E = `${kind}Emails`;
  const A = `${kind}Addresses`;
  const specs: FieldSpec[] = [
    { path: [orgKey], kind: 'string', notNull: true, deleteField: 'orgGuid', bad: badGuid(s.orgGuid) },
    { path: [idKey], kind: 'string', notNull: true, max: 32, deleteField: idA },
    ...[
      'title',
      'firstName',
      'lastName',
      'titleHebrew',
      'firstNameHebrew',
      'lastNameHebrew',
      'suffixHebrew',
    ].map((k) => text([k])),
    { path: [P], kind: 'array' },
    { path: [P, 0], kind: 'object', notNull: true },
    ...Object.keys(phone).map((k) => text([P, 0, k])),
    { path: [E], kind: 'array' },
    { path: [E, 0], kind: 'object', notNull: true },
    text([E, 0, 'emailLabel']),
    { path: [E, 0, 'emailAddress'], kind: 'string', bad: badEmail },
    { path: [A], kind: 'array' },
    { path: [A, 0], kind: 'object', notNull: true },
    ...Object.keys(address).map((k) => text([A, 0, k])),
  ];
  // Blank values that break a name pair; null and "absent" keep the stored value on update.
  // (donor: null is ignored; collector: null deletes).
  const blanks: unknown[] =
    mode !== 'update'
      ? ['', ' ', '\t ', null, undefined]
      : kind === 'donor'
        ? ['', ' ', '\t ']
        : ['', ' ', '\t ', null];
  const blank = fc.constantFrom(...blanks);
  const blankOp = (k: string, v: unknown) => (v === undefined ? del([k]) : set([k], v));
  const out: fc.Arbitrary<Mutation>[] = [
    ...fieldMutations(specs),
    fc
      .tuple(
        fc.constantFrom('firstName', 'lastName'),
        blank,
        fc.constantFrom('firstNameHebrew', 'lastNameHebrew'),
        blank,
      )
      .map(([a, va, b, vb]) =>
        m('no complete name pair', [blankOp(a, va), blankOp(b, vb)], invalid('firstName')),
      ),
    fc.tuple(fc.constantFrom(P, E, A), fc.integer({ min: 21, max: 40 })).map(([k, n]) => {
      const item = k === P ? phone : k === E ? email : address;
      return m(`${n} items in ${k}`, [set([k], Array(n).fill(item))], invalid(k));
    }),
    otherGuid(s.orgGuid).map((g) =>
      m('orgGuid and orgGUID differ', [set([otherKey], g)], invalid('orgGuid')),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('another organisation', [set([orgKey], g)], { status: 403, codes: ['FORBIDDEN'] }),
    ),
    fc
      .constantFrom('', 'D999999999', s.donorId, s.collectorId, 'X1')
      .filter((id) => id !== getPath(base.body, [idKey]))
      .map((id) => m(`${idA} and ${idB} differ`, [set([idKey === idA ? idB : idA], id)], invalid(idA))),
  ];
  if (kind === 'donor') {
    out.push(
      fc
        .oneof(
          fc.constantFrom('X123', 'D', 'D12a', 'd-1', 'C1001', '100001', `D${'9'.repeat(19)}`),
          fc.stringMatching(/^[A-CE-Za-ce-z][0-9]{1,10}$/),
        )
        .map((id) => m('donorID not an account number', [set([idKey], id)], invalid('donorID'))),
    );
  } else {
    out.push(
      fc
        .oneof(
          fc.stringMatching(/^C9\d{6,12}$/),
          fc.stringMatching(/^[A-Za-z0-9]{1,12}$/).filter((id) => !/^C\d+$/i.test(id)),
        )
        .map((id) => m('unknown collector', [set([idKey], id)], { status: 404, codes: ['NOT_FOUND'] })),
    );
  }
  return fc.oneof(...out);
}

// ---------------------------------------------------------------------------------------------
// SaveReason / SaveCampaign

export const reasonBase = (s: Seeds): fc.Arbitrary<Base> =>
  fc
    .record({
      orgKey: fc.constantFrom('orgGuid', 'orgGUID'),
      update: fc.boolean(),
      campaignNum: fc.constantFrom(s.campaignNum, 0, null, undefined),
      tag: suffix,
    })
    .map(({ orgKey, update, campaignNum, tag }) => ({
      orgKey,
      body: {
        [orgKey]: s.orgGuid,
        reasonNumber: update ? s.spareReasonNum : 0,
        // Not the name Charge bodies give their first reason: a reason saved here with a campaign
        // would be the one those Charges find by name, locked to that campaign.
        reasonName: `Fuzz saved reason ${tag}`,
        reasonNameHebrew: 'סיבה',
        homePhoneNumber: '555-0100',
        cellPhoneNum: '555-0101',
        email: 'reason@example.com',
        ...(campaignNum === undefined ? {} : { campaignNum }),
      },
    }));

export function reasonMutations(s: Seeds, base: Base): fc.Arbitrary<Mutation> {
  const { orgKey } = base;
  const otherKey = orgKey === 'orgGuid' ? 'orgGUID' : 'orgGuid';
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  const blank = fc.constantFrom('', ' ', '\t', null, undefined);
  const namesBlank = (create: boolean) => (create ? blank : fc.constantFrom('', ' ', '\t'));
  const blankOp = (k: string, v: unknown) => (v === undefined ? del([k]) : set([k], v));
  return fc.oneof(
    ...fieldMutations([
      { path: [orgKey], kind: 'string', notNull: true, deleteField: 'orgGuid', bad: badGuid(s.orgGuid) },
      { path: ['reasonNumber'], kind: 'int', min: 0, notNull: true, deleteField: 'reasonNumber' },
      text(['reasonName']),
      text(['reasonNameHebrew']),
      text(['homePhoneNumber']),
      text(['cellPhoneNum']),
      { path: ['email'], kind: 'string', max: 256, bad: badEmail },
      { path: ['campaignNum'], kind: 'int', min: 0 },
    ]),
    // An update keeps the names it does not send (null, absent): only deleting both ('') leaves
    // the reason nameless; a new reason needs one whatever is sent.
    fc
      .tuple(namesBlank(base.body.reasonNumber === 0), namesBlank(base.body.reasonNumber === 0))
      .map(([a, b]) =>
        m(
          'neither reasonName nor reasonNameHebrew',
          [blankOp('reasonName', a), blankOp('reasonNameHebrew', b)],
          invalid('reasonName'),
        ),
      ),
    fc
      .integer({ min: 900_000, max: 2 ** 31 - 1 })
      .map((n) =>
        m(
          'unknown campaignNum',
          [set(['campaignNum'], n)],
          invalid('campaignNum', { message: 'CampaignNum is invalid' }),
        ),
      ),
    fc
      .integer({ min: 900_000, max: 2 ** 31 - 1 })
      .map((n) =>
        m('unknown reasonNumber', [set(['reasonNumber'], n)], { status: 404, codes: ['NOT_FOUND'] }),
      ),
    otherGuid(s.orgGuid).map((g) =>
      m('orgGuid and orgGUID differ', [set([otherKey], g)], invalid('orgGuid')),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('another organisation', [set([orgKey], g)], { status: 403, codes: ['FORBIDDEN'] }),
    ),
  );
}

export const campaignBase = (s: Seeds): fc.Arbitrary<Base> =>
  fc
    .record({ orgKey: fc.constantFrom('orgGuid', 'orgGUID'), update: fc.boolean(), tag: suffix })
    .map(({ orgKey, update, tag }) => ({
      orgKey,
      body: {
        [orgKey]: s.orgGuid,
        campaignNumber: update ? s.campaignNum : 0,
        campaignName: `Fuzz campaign ${tag}`,
        campaignFriendlyName: 'Fuzz friendly',
      },
    }));

export function campaignMutations(s: Seeds, base: Base): fc.Arbitrary<Mutation> {
  const { orgKey } = base;
  const otherKey = orgKey === 'orgGuid' ? 'orgGUID' : 'orgGuid';
  const m = (label: string, ops: Op[], expect: Expected): Mutation => ({ label, ops, expect });
  const blank = fc.constantFrom('', ' ', '\t', null, undefined);
  const namesBlank = (create: boolean) => (create ? blank : fc.constantFrom('', ' ', '\t'));
  const blankOp = (k: string, v: unknown) => (v === undefined ? del([k]) : set([k], v));
  return fc.oneof(
    ...fieldMutations([
      { path: [orgKey], kind: 'string', notNull: true, deleteField: 'orgGuid', bad: badGuid(s.orgGuid) },
      { path: ['campaignNumber'], kind: 'int', min: 0, notNull: true, deleteField: 'campaignNumber' },
      text(['campaignName']),
      text(['campaignFriendlyName']),
    ]),
    fc
      .tuple(namesBlank(base.body.campaignNumber === 0), namesBlank(base.body.campaignNumber === 0))
      .map(([a, b]) =>
        m(
          'neither campaignName nor campaignFriendlyName',
          [blankOp('campaignName', a), blankOp('campaignFriendlyName', b)],
          invalid('campaignName'),
        ),
      ),
    fc
      .integer({ min: 900_000, max: 2 ** 31 - 1 })
      .map((n) =>
        m('unknown campaignNumber', [set(['campaignNumber'], n)], { status: 404, codes: ['NOT_FOUND'] }),
      ),
    otherGuid(s.orgGuid).map((g) =>
      m('orgGuid and orgGUID differ', [set([otherKey], g)], invalid('orgGuid')),
    ),
    otherGuid(s.orgGuid).map((g) =>
      m('another organisation', [set([orgKey], g)], { status: 403, codes: ['FORBIDDEN'] }),
    ),
  );
}
