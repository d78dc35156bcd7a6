import { createRoute, OpenAPIHono } from '@hono/zod-openapi';
import { campaignRecord, reasonRecord, saveCampaignRequest, saveReasonRequest } from '@kupah/contracts';
import { authenticate } from '../auth/middleware.ts';
import type { AppEnv } from '../http/env.ts';
import { ERROR_RESPONSES, jsonBody, jsonOk } from '../http/openapi.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';
import { saveCampaign, saveReason } from './catalog-service.ts';

export function catalogRoutes(buckets: TokenBuckets) {
  const auth = authenticate({ source: false, apiKey: true }, buckets);
  const reasonRoute = createRoute({
    method: 'put',
    path: '/V1/External/SaveReason',
    tags: ['Reasons and campaigns'],
    summary: 'Create or update a reason',
    description:
      'reasonNumber 0 creates and answers the generated number; an existing number updates; an unknown one is 404. ' +
      'A campaignNum that is not a campaign of the organisation is 400 "CampaignNum is invalid".',
    security: [{ ApiKey: [] }],
    middleware: [auth] as const,
    request: jsonBody(saveReasonRequest, 'Reason (2.6)'),
    responses: { ...jsonOk(reasonRecord, 'The saved reason'), ...ERROR_RESPONSES },
  });
  const campaignRoute = createRoute({
    method: 'put',
    path: '/V1/External/SaveCampaign',
    tags: ['Reasons and campaigns'],
    summary: 'Create or update a campaign',
    description:
      'campaignNumber 0 creates and answers the generated number; an existing number updates; an unknown one is 404.',
    security: [{ ApiKey: [] }],
    middleware: [auth] as const,
    request: jsonBody(saveCampaignRequest, 'Campaign (2.6)'),
    responses: { ...jsonOk(campaignRecord, 'The saved campaign'), ...ERROR_RESPONSES },
  });
  return new OpenAPIHono<AppEnv>()
    .openapi(reasonRoute, async (c) =>
      c.json(await saveReason(c.var.deps, c.var.caller, c.req.valid('json')), 200),
    )
    .openapi(campaignRoute, async (c) =>
      c.json(await saveCampaign(c.var.deps, c.var.caller, c.req.valid('json')), 200),
    );
}
