/**
 * Writes the OpenAPI document the server serves at /openapi.json to a file, without a database or
 * a listener (the document comes from the routes' declarations only). Used to generate the typed
 * client: `npm run generate:client`.
 *
 *   tsx apps/server/scripts/openapi.ts <out.json>
 */
import { writeFileSync } from 'node:fs';
import pino from 'pino';
import { createApp } from '../src/app.ts';
import type { Db } from '../src/db/database.ts';
import type { Deps } from '../src/deps.ts';
import { gatewayCalls } from '../src/gateway/gateway-calls.ts';
import { staticGatewayRegistry } from '../src/gateway/registry.ts';
import { sandboxGateway } from '../src/gateway/sandbox-gateway.ts';
import { createMetrics } from '../src/http/metrics.ts';

/** The document as the server serves it. */
export async function openApiDocument(): Promise<unknown> {
  const noDatabase = {
    kind: 'postgres',
    query: () => Promise.reject(new Error('no database: the document needs none')),
  } as unknown as Db;
  const deps: Deps = {
    db: noDatabase,
    gateways: staticGatewayRegistry(sandboxGateway()),
    calls: gatewayCalls({ timeoutMs: 1_000, settleMs: 0 }),
    now: () => new Date(),
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    requestHashKey: '',
  };
  const res = await createApp(deps, {}).request('/openapi.json');
  if (!res.ok) throw new Error(`/openapi.json answered ${res.status}`);
  return res.json();
}

const out = process.argv[2];
if (out && import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(out, `${JSON.stringify(await openApiDocument(), null, 2)}\n`);
  console.log(`wrote ${out}`);
}
