/**
 * The read API for reporting and reconciliation (API key; every query scoped to the key's
 * organisation): payments, one payment, totals, donors.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { AppEnv } from '../http/env.ts';
import type { TokenBuckets } from '../http/rate-limit.ts';

export function reportRoutes(_buckets: TokenBuckets) {
  return new OpenAPIHono<AppEnv>();
}
