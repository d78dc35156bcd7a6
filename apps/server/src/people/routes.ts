import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { collectorRecord, donorRecord, saveCollectorRequest, saveDonorRequest } from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { saveCollector, saveDonor } from './people-service.ts';

export function peopleRoutes(buckets: TokenBuckets) {
  const auth = authenticate({ source: false, apiKey: true }, buckets);
  const donorRoute = createRoute({
    method: 'put',
    path: '/V1/External/SaveDonor',
    tags: ['Donors and collectors'],
    summary: 'Create or update a donor',
    description:
      'donorID "" creates; an existing id updates and answers the merged record; a valid unknown id (D + digits) ' +
      'creates the donor with that id. A field sent as null is kept; an empty string or empty array deletes. ' +
      'A complete English or Hebrew name pair is required. donorId is accepted for donorID.',
    security: [{ ApiKey: [] }],
    middleware: [auth] as const,
    request: jsonBody(saveDonorRequest, 'Donor (2.5)'),
    responses: { ...jsonOk(donorRecord, 'The saved donor'), ...ERROR_RESPONSES },
  });
  const collectorRoute = createRoute({
    method: 'put',
    path: '/V1/External/SaveCollector',
    tags: ['Donors and collectors'],
    summary: 'Create or update a collector',
    description:
      'collectorID "" creates; an existing id updates (fields not sent are kept; null, "" or [] delete); an unknown ' +
      'id is 404. collectorId is accepted for collectorID.',
    security: [{ ApiKey: [] }],
    middleware: [auth] as const,
    request: jsonBody(saveCollectorRequest, 'Collector (2.5)'),
    responses: { ...jsonOk(collectorRecord, 'The saved collector'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<AppEnv>()
    .openapi(donorRoute, async (c) =>
      c.json(await saveDonor(c.var.deps, c.var.caller, c.req.valid('json')), 200),
    )
    .openapi(collectorRoute, async (c) =>
      c.json(await saveCollector(c.var.deps, c.var.caller, c.req.valid('json')), 200),
    );
}
