/**
 * The OpenAPI document as integrators' tools need it, finished from the routes' own declarations:
 * `servers`, a stable `operationId` per operation (generated clients name their methods after
 * them), an explicit `security` on every operation, and the answers every operation can give
 * beyond its own: 405 with `Allow`, 415, 431, and the headers of 401 (`WWW-Authenticate`) and 429
 * (`Retry-After`). One table here, so a route added without an operationId fails its test.
 */
/** `method path` (as the document writes them) → operationId. */
export const OPERATION_IDS: Record<string, string> = {
  'post /v1/External/Charge': 'charge',
  'post /v1/External/VoidPayment': 'voidPayment',
  'post /v1/External/RefundPayment': 'refundPayment',
  'post /v1/External/SchedulePayment': 'schedulePayment',
  'post /v1/External/SchedulePreview': 'schedulePreview',
  'get /v1/External/Schedules': 'listSchedules',
  'post /v1/External/Schedules/{scheduleNum}/Cancel': 'cancelSchedule',
  'post /v1/External/Schedules/{scheduleNum}/Pause': 'pauseSchedule',
  'post /v1/External/Schedules/{scheduleNum}/Resume': 'resumeSchedule',
  'put /v1/External/Schedules/{scheduleNum}/PaymentMethod': 'changeSchedulePaymentMethod',
  'put /V1/External/SaveDonor': 'saveDonor',
  'put /V1/External/SaveCollector': 'saveCollector',
  'put /V1/External/SaveReason': 'saveReason',
  'put /V1/External/SaveCampaign': 'saveCampaign',
  'post /v1/Device/Pair': 'pairDevice',
  'post /v1/Device/Sync/Push': 'pushDeviceOperations',
  'get /v1/Device/Sync/Pull': 'pullDeviceChanges',
  'post /v1/Device/Shift/Close': 'closeDeviceShift',
  'get /v1/External/Reports/Shifts': 'listShifts',
  'get /v1/External/Payments': 'listPayments',
  'get /v1/External/Payments/{receiptNum}': 'getPayment',
  'get /v1/External/Reports/Totals': 'getTotals',
  'get /v1/External/Donors': 'searchDonors',
  'get /v1/External/Donors/{accountNum}': 'getDonor',
  'get /v1/External/Payments/{receiptNum}/Receipt': 'getReceipt',
  'post /v1/External/Payments/{receiptNum}/Receipt/Send': 'sendReceipt',
  'get /v1/External/Receipts': 'listReceiptDeliveries',
  'get /v1/External/Donors/{accountNum}/Statements/{year}': 'getYearEndStatement',
  'post /v1/Device/Receipt/Send': 'sendDeviceReceipt',
};

/** The operations' tags, described (the document lists every tag an operation uses). */
export const TAGS: Record<string, string> = {
  Payments: 'One-time charges, voids and refunds (Charge, VoidPayment, RefundPayment).',
  Schedules: 'Recurring and future-dated payments, their preview and management.',
  'Donors and collectors': 'Create or update donors and collectors (SaveDonor, SaveCollector).',
  'Reasons and campaigns': 'Create or update reasons and campaigns (SaveReason, SaveCampaign).',
  Reports: 'Read API for reporting and reconciliation: payments, totals, donors (API key).',
  'Device sync': 'Pairing, pushing queued operations and pulling reference data (terminals).',
  Receipts: 'Tax receipts and year-end statements: PDF downloads, e-mailed copies, delivery state (API key).',
};

type Json = Record<string, unknown>;
const BODY_METHODS = new Set(['post', 'put', 'patch']);
/** The error body (the `ErrorResponse` schema every route's error answers register). */
const ERROR_CONTENT = { 'application/json': { schema: { $ref: '#/components/schemas/ErrorResponse' } } };

/** The finished document (a copy; the input is not changed). */
export function finishDocument(generated: object): Json {
  const doc = structuredClone(generated) as Json & { paths?: Record<string, Record<string, Json>> };
  doc.servers = [
    {
      url: '/',
      description:
        'This server (the document is served by the server it describes; behind a proxy, the public address)',
    },
  ];
  const used = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const methods = Object.keys(item).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m));
    const allow = methods
      .flatMap((m) => (m === 'get' ? ['GET', 'HEAD'] : [m.toUpperCase()]))
      .sort()
      .join(', ');
    for (const method of methods) {
      const op = item[method] as Json & { responses: Record<string, Json>; security?: unknown };
      for (const tag of (op.tags as string[] | undefined) ?? []) used.add(tag);
      const id = OPERATION_IDS[`${method} ${path}`];
      if (id) op.operationId = id;
      // Pairing is authorised by the one-time code in its body, not by a header.
      op.security ??= [];
      const responses = op.responses;
      if (responses['401']) {
        responses['401'] = {
          ...responses['401'],
          headers: {
            'WWW-Authenticate': {
              description: 'The credential schemes this operation accepts',
              schema: { type: 'string' },
            },
          },
        };
      }
      if (responses['429']) {
        responses['429'] = {
          ...responses['429'],
          headers: {
            'Retry-After': {
              description: 'Seconds to wait before trying again',
              schema: { type: 'integer' },
            },
          },
        };
      }
      responses['405'] = {
        description: `The path answers other methods only (${allow})`,
        headers: { Allow: { description: 'The methods this path answers', schema: { type: 'string' } } },
        content: ERROR_CONTENT,
      };
      if (BODY_METHODS.has(method)) {
        responses['415'] = { description: 'The body is not application/json', content: ERROR_CONTENT };
      }
      responses['431'] = { description: 'Request headers too large (answered by the HTTP server, no body)' };
    }
  }
  doc.tags = [...used].sort().map((name) => ({ name, description: TAGS[name] ?? name }));
  requireOneSpelling(doc);
  return doc;
}

/**
 * Fields the interface spells two ways, one of which a request must carry: the organisation
 * (`orgGUID`/`orgGuid`) in every request body that has it, and the record id of SaveDonor and
 * SaveCollector (an empty string creates a record). Each pair becomes a `oneOf` of the two
 * `required` lists: send one spelling (the server also accepts both when they are equal).
 */
export const ONE_OF_REQUIRED: Record<string, [string, string][]> = {
  SaveDonorRequest: [['donorID', 'donorId']],
  SaveCollectorRequest: [['collectorID', 'collectorId']],
};

function requireOneSpelling(doc: Json): void {
  const schemas = ((doc.components as Json | undefined)?.schemas ?? {}) as Record<string, Json>;
  for (const [name, schema] of Object.entries(schemas)) {
    if (!name.endsWith('Request')) continue;
    const props = (schema.properties ?? {}) as Json;
    const pairs: [string, string][] = [];
    if ('orgGUID' in props && 'orgGuid' in props) pairs.push(['orgGUID', 'orgGuid']);
    pairs.push(...(ONE_OF_REQUIRED[name] ?? []));
    const alternatives = pairs.map(([a, b]) => ({ oneOf: [{ required: [a] }, { required: [b] }] }));
    if (alternatives.length === 1) Object.assign(schema, alternatives[0]);
    else if (alternatives.length > 1) schema.allOf = alternatives;
  }
}
