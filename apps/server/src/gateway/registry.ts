/**
 * Which gateway a caller charges through. A sandbox credential only ever reaches the sandbox
 * gateway; a production credential reaches the gateway its organisation configured (`org gateway`),
 * or none.
 */
import type { Gateway } from './gateway.ts';

export interface GatewayCaller {
  sandbox: boolean;
  org: { id: number };
}

export interface GatewayRegistry {
  /** The gateway of this caller; null when its organisation has no production gateway. */
  forCaller(caller: GatewayCaller): Promise<Gateway | null>;
}

/** One fixed gateway for every production caller (tests and benchmarks). */
export function staticGatewayRegistry(sandbox: Gateway, production: Gateway | null = null): GatewayRegistry {
  return {
    forCaller: async (caller) => (caller.sandbox ? sandbox : production),
  };
}
