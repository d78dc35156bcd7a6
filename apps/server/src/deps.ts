import type { Logger } from 'pino';
import type { Db } from './db/database.ts';
import type { GatewayCalls } from './gateway/gateway-calls.ts';
import type { GatewayRegistry } from './gateway/registry.ts';
import type { Metrics } from './http/metrics.ts';

/** What the services need from the outside world, passed in (tests pass their own clock). */
export interface Deps {
  db: Db;
  gateways: GatewayRegistry;
  /** Every gateway call goes through this: concurrency bounds and the time-out. */
  calls: GatewayCalls;
  now: () => Date;
  logger: Logger;
  metrics: Metrics;
  /** Key of the idempotency request hash (an installation secret). */
  requestHashKey: string;
  /**
   * HMAC key of card and bank-account fingerprints (abuse/fingerprint.ts): derived with
   * `deriveFingerprintKey` from the installation's `fingerprint_key`, which is kept sealed under the
   * KEK (a dump alone does not yield it; it survives a KEK rotation). Optional: see `fingerprintsOf`.
   */
  fingerprintKey?: Buffer;
}
