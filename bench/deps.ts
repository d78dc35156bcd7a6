import pino from 'pino';
import type { Db } from '../apps/server/src/db/database.ts';
import { installationSecret } from '../apps/server/src/db/server-state.ts';
import type { Deps } from '../apps/server/src/deps.ts';
import { gatewayCalls } from '../apps/server/src/gateway/gateway-calls.ts';
import { staticGatewayRegistry } from '../apps/server/src/gateway/registry.ts';
import { sandboxGateway } from '../apps/server/src/gateway/sandbox-gateway.ts';
import { createMetrics } from '../apps/server/src/http/metrics.ts';

/** The services' dependencies over a benchmark database: the sandbox gateway, real time, no logs. */
export async function benchDeps(db: Db): Promise<Deps> {
  return {
    db,
    gateways: staticGatewayRegistry(sandboxGateway()),
    calls: gatewayCalls(),
    now: () => new Date(),
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(),
    requestHashKey: await installationSecret(db, 'request_hash_key'),
  };
}
