/**
 * Which gateway a caller charges through. A sandbox credential only ever reaches the sandbox
 * gateway; a production credential reaches the gateway its organisation configured (`org gateway`),
 * or none.
 *
 * The organisation's gateway is built once and cached by org id and `orgs.gateway_rev`: every change
 * bumps the rev, and the caller's org carries the rev it was read with, so a change made through
 * any instance is seen by every instance on its next request. The row is read and the key opened
 * only on a cache miss.
 */
import type { Logger } from 'pino';
import type { Sql } from '../db/database.ts';
import type { KeyEncryptionKey } from '../secrets/key-encryption.ts';
import type { Gateway } from './gateway.ts';
import { loadOrgGateway, orgGatewayAad } from './repo.ts';
import { SOLA_RUNS_RECURRENCES, solaGateway } from './sola-gateway.ts';

export interface GatewayCaller {
  sandbox: boolean;
  /** `gatewayRev`: the org's `gateway_rev` as read with the caller (-1: unknown, read it afresh). */
  org: { id: number; gatewayRev: number };
}

export interface GatewayRegistry {
  /**
   * The gateway of this caller; null when its organisation has no production gateway. `sql`: the
   * transaction the caller is in, if any (PGlite has one connection: a read outside it would wait).
   */
  forCaller(caller: GatewayCaller, sql?: Sql): Promise<Gateway | null>;
}

/** One fixed gateway for every production caller (tests and benchmarks). */
export function staticGatewayRegistry(sandbox: Gateway, production: Gateway | null = null): GatewayRegistry {
  return {
    forCaller: async (caller) => (caller.sandbox ? sandbox : production),
  };
}

/** Builds a provider's gateway from an organisation's configuration (`url` null: its production endpoint). */
export type GatewayFactory = (cfg: { key: string; url: string | null }) => Gateway;

export interface GatewayProvider {
  /** How operators and messages name it. */
  label: string;
  /** Whether it runs recurrences for us (ScheduleHandlingMode `Gateway`). */
  runsRecurrences: boolean;
  create: GatewayFactory;
}

/** The gateways an organisation can be configured with (`org gateway --provider <name>`). */
export const GATEWAY_PROVIDERS: Readonly<Record<string, GatewayProvider>> = {
  sola: {
    label: 'Sola',
    runsRecurrences: SOLA_RUNS_RECURRENCES,
    create: (c) => solaGateway(c.url ? { key: c.key, url: c.url } : { key: c.key }),
  },
};

export const isGatewayProvider = (name: string): boolean => Object.hasOwn(GATEWAY_PROVIDERS, name);

/** A registry of per-organisation gateways; it also holds the KEK their keys are sealed under. */
export interface OrgGatewayRegistry extends GatewayRegistry {
  /** Seals keys as the admin API stores them, and opens them here. */
  readonly kek: KeyEncryptionKey;
}

/** The KEK of a registry that has one (`createGatewayRegistry`); null for a static registry. */
export function kekOf(registry: GatewayRegistry): KeyEncryptionKey | null {
  const kek = (registry as Partial<OrgGatewayRegistry>).kek;
  return kek && typeof kek.seal === 'function' ? kek : null;
}

export interface GatewayRegistryOptions {
  db: Sql;
  sandbox: Gateway;
  kek: KeyEncryptionKey;
  /** Factories by provider name (default: each of `GATEWAY_PROVIDERS`). */
  providers?: Readonly<Record<string, GatewayFactory>>;
  logger?: Pick<Logger, 'info' | 'error'>;
  /** Organisations whose gateway is kept built (least recently used dropped first). */
  maxCached?: number;
}

interface Entry {
  rev: number;
  gateway: Gateway | null;
}

export function createGatewayRegistry(opts: GatewayRegistryOptions): OrgGatewayRegistry {
  const { db, sandbox, kek, logger } = opts;
  const providers =
    opts.providers ??
    Object.fromEntries(Object.entries(GATEWAY_PROVIDERS).map(([name, p]) => [name, p.create]));
  const maxCached = opts.maxCached ?? 10_000;
  const cache = new Map<number, Entry>();
  /** Loads under way, by org id and the rev the caller asked for: concurrent misses read once. */
  const loading = new Map<string, Promise<Entry>>();

  function remember(orgId: number, entry: Entry): void {
    const held = cache.get(orgId);
    if (held && held.rev > entry.rev) return; // a newer one was loaded meanwhile
    cache.delete(orgId);
    cache.set(orgId, entry);
    if (cache.size > maxCached) cache.delete(cache.keys().next().value!);
  }

  async function load(orgId: number, sql: Sql): Promise<Entry> {
    const found = await loadOrgGateway(sql, orgId);
    if (!found) throw new Error(`organisation ${orgId} does not exist`);
    const stored = found.gateway;
    if (!stored) return { rev: found.rev, gateway: null };
    const factory = Object.hasOwn(providers, stored.provider) ? providers[stored.provider] : undefined;
    if (!factory) {
      throw new Error(`organisation ${orgId}: unknown gateway provider "${stored.provider}"`);
    }
    let key: string;
    try {
      key = kek.open(stored.keySealed, orgGatewayAad(orgId));
    } catch (err) {
      throw new Error(
        `organisation ${orgId}: its ${stored.provider} key does not open: ${(err as Error).message}`,
      );
    }
    const gateway = factory({ key, url: stored.url });
    logger?.info({ orgId, provider: stored.provider, gatewayRev: found.rev }, 'organisation gateway loaded');
    return { rev: found.rev, gateway };
  }

  return {
    kek,
    async forCaller(caller, sql) {
      if (caller.sandbox) return sandbox;
      const { id, gatewayRev } = caller.org;
      const held = cache.get(id);
      if (held && held.rev === gatewayRev) return held.gateway;
      const k = `${id}:${gatewayRev}`;
      let pending = loading.get(k);
      if (!pending) {
        pending = load(id, sql ?? db).finally(() => loading.delete(k));
        loading.set(k, pending);
      }
      try {
        const entry = await pending;
        remember(id, entry);
        return entry.gateway;
      } catch (err) {
        logger?.error({ orgId: id, err: (err as Error).message }, 'organisation gateway not available');
        throw err;
      }
    },
  };
}
