import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CreatedOrg, createApiKey, createOrg, setOrgGateway } from '../admin/admin-service.ts';
import { hashCredential } from '../auth/credentials.ts';
import { findApiKeyCaller } from '../auth/repo.ts';
import { type Db, openDatabase } from '../db/database.ts';
import { migrate } from '../db/migrations.ts';
import { findOrgByGuid } from '../orgs/repo.ts';
import { type KeyEncryptionKey, keyEncryptionKey } from '../secrets/key-encryption.ts';
import { PG_URL, testDatabases } from '../testing/harness.ts';
import type { Gateway, GatewayResult } from './gateway.ts';
import {
  createGatewayRegistry,
  GATEWAY_PROVIDERS,
  type GatewayFactory,
  kekOf,
  type OrgGatewayRegistry,
  staticGatewayRegistry,
} from './registry.ts';
import { orgGatewayAad } from './repo.ts';
import { SOLA_RUNS_RECURRENCES } from './sola-gateway.ts';

const OK: GatewayResult = { status: 'Success', gatewayRef: null, token: null, code: null, message: null };

/** A gateway that only says who it is (name) and what it was built with. */
function fakeGateway(name: string, cfg: { key: string; url: string | null }): Gateway & { cfg: typeof cfg } {
  return {
    name,
    cfg,
    authorize: async () => OK,
    tokenize: async () => OK,
    void: async () => OK,
    lookup: async () => null,
    refund: async () => OK,
    refunds: () => true,
  };
}

/** A KEK that counts how often it opens a value. */
function countingKek(inner: KeyEncryptionKey) {
  const counter = { opened: 0 };
  const kek: KeyEncryptionKey = {
    id: inner.id,
    previousId: inner.previousId,
    seal: (p, a) => inner.seal(p, a),
    deriveKey: (info) => inner.deriveKey(info),
    open: (s, a) => {
      counter.opened++;
      return inner.open(s, a);
    },
  };
  return { kek, counter };
}

describe('kekOf', () => {
  it('is null for a static registry (nothing to configure)', () => {
    const sandbox = fakeGateway('Sandbox', { key: '', url: null });
    expect(kekOf(staticGatewayRegistry(sandbox))).toBeNull();
  });

  it('Sola is a known provider that does not run our recurrences', () => {
    expect(GATEWAY_PROVIDERS.sola).toMatchObject({ label: 'Sola', runsRecurrences: SOLA_RUNS_RECURRENCES });
    expect(SOLA_RUNS_RECURRENCES).toBe(false);
  });
});

describe.each(await testDatabases())('per-organisation gateway registry on %s', (kind) => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let db: Db;
  let org: CreatedOrg;
  let liveKey: string;
  const sandbox = fakeGateway('Sandbox', { key: '', url: null });
  const inner = keyEncryptionKey(randomBytes(32));
  const built: { key: string; url: string | null }[] = [];
  const providers: Record<string, GatewayFactory> = {
    sola: (cfg) => {
      built.push(cfg);
      return fakeGateway('Sola', cfg);
    },
  };
  const now = new Date('2026-03-01T12:00:00Z');

  beforeAll(async () => {
    db = await openDatabase(kind === 'postgres' ? { url: PG_URL, schema, poolSize: 5 } : { schema });
    await migrate(db);
    org = await createOrg(db, 'Registry Org');
    liveKey = (await createApiKey(db, org.orgGuid, false, 'live')).apiKey;
  });
  afterAll(async () => {
    if (kind === 'postgres') await db?.query(`DROP SCHEMA ${schema} CASCADE`).catch(() => {});
    await db?.close();
  });

  /** The production caller as authentication loads it (with its org's gateway_rev). */
  const liveCaller = async (apiKey = liveKey) => {
    const caller = await findApiKeyCaller(db, hashCredential(apiKey));
    expect(caller?.sandbox).toBe(false);
    return caller!;
  };
  const sandboxCaller = async () => (await findApiKeyCaller(db, hashCredential(org.apiKey)))!;
  const configure = (
    registry: OrgGatewayRegistry,
    key: string,
    url: string | null = null,
    guid = org.orgGuid,
  ) => setOrgGateway(db, registry, guid, { provider: 'sola', key, url }, now);
  const remove = (registry: OrgGatewayRegistry, guid = org.orgGuid) =>
    setOrgGateway(db, registry, guid, { provider: 'none' }, now);

  it('an org carries its gateway_rev from every read (auth and the orgs repo)', async () => {
    const caller = await liveCaller();
    expect(caller.org.gatewayRev).toBe(0);
    expect((await findOrgByGuid(db, org.orgGuid))?.gatewayRev).toBe(0);
  });

  it('production without a configured gateway → null; sandbox → the sandbox gateway', async () => {
    const registry = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    expect(await registry.forCaller(await liveCaller())).toBeNull();
    expect(await registry.forCaller(await sandboxCaller())).toBe(sandbox);
  });

  it('production gets the configured gateway, built once from the opened key; the sandbox never does', async () => {
    const { kek, counter } = countingKek(inner);
    const registry = createGatewayRegistry({ db, sandbox, kek, providers });
    const key = `sola_${randomBytes(12).toString('hex')}`;
    const answer = await configure(registry, key, 'http://127.0.0.1:9/emulator');
    expect(answer).toEqual({
      orgGuid: org.orgGuid,
      provider: 'sola',
      url: 'http://127.0.0.1:9/emulator',
      keyLast4: key.slice(-4),
      updatedAt: now.toISOString(),
    });

    const builds = built.length;
    const caller = await liveCaller();
    expect(caller.org.gatewayRev).toBeGreaterThan(0);
    const gateway = (await registry.forCaller(caller)) as ReturnType<typeof fakeGateway>;
    expect(gateway.name).toBe('Sola');
    expect(gateway.cfg).toEqual({ key, url: 'http://127.0.0.1:9/emulator' });
    expect(built.length).toBe(builds + 1);
    expect(counter.opened).toBe(1);

    // Cached by org and rev: no second read or opening, the same instance.
    for (let i = 0; i < 5; i++) expect(await registry.forCaller(await liveCaller())).toBe(gateway);
    expect(counter.opened).toBe(1);
    expect(built.length).toBe(builds + 1);

    // A sandbox credential of the same org still only reaches the sandbox.
    expect(await registry.forCaller(await sandboxCaller())).toBe(sandbox);
    expect(await registry.forCaller({ sandbox: true, org: caller.org })).toBe(sandbox);
  });

  it('concurrent first requests read and open the key once', async () => {
    const { kek, counter } = countingKek(inner);
    const registry = createGatewayRegistry({ db, sandbox, kek, providers });
    const caller = await liveCaller();
    const gateways = await Promise.all(Array.from({ length: 20 }, () => registry.forCaller(caller)));
    expect(new Set(gateways).size).toBe(1);
    expect(counter.opened).toBe(1);
  });

  it('a change through another instance bumps the rev and is picked up on the next request', async () => {
    const here = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    const there = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    const first = `sola_${randomBytes(12).toString('hex')}`;
    await configure(there, first);
    const before = await liveCaller();
    expect(((await here.forCaller(before)) as ReturnType<typeof fakeGateway>).cfg).toEqual({
      key: first,
      url: null,
    });

    const second = `sola_${randomBytes(12).toString('hex')}`;
    await configure(there, second);
    const after = await liveCaller();
    expect(after.org.gatewayRev).toBe(before.org.gatewayRev + 1);
    expect(((await here.forCaller(after)) as ReturnType<typeof fakeGateway>).cfg.key).toBe(second);

    // A request that read its org before the change and asks late still gets a gateway (the newest).
    expect(((await here.forCaller(before)) as ReturnType<typeof fakeGateway>).cfg.key).toBe(second);
    // An org read without its rev (-1) is never served from the cache.
    expect(
      (
        (await here.forCaller({ sandbox: false, org: { id: after.org.id, gatewayRev: -1 } })) as ReturnType<
          typeof fakeGateway
        >
      ).cfg.key,
    ).toBe(second);
  });

  it('`none` removes it: the next request gets null, everywhere', async () => {
    const here = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    await configure(here, `sola_${randomBytes(12).toString('hex')}`);
    expect(await here.forCaller(await liveCaller())).not.toBeNull();
    const before = (await liveCaller()).org.gatewayRev;
    expect(await remove(createGatewayRegistry({ db, sandbox, kek: inner, providers }))).toEqual({
      orgGuid: org.orgGuid,
      provider: null,
      url: null,
      keyLast4: null,
      updatedAt: now.toISOString(),
    });
    const caller = await liveCaller();
    expect(caller.org.gatewayRev).toBe(before + 1);
    expect(await here.forCaller(caller)).toBeNull();
    expect(await db.query('SELECT 1 FROM org_gateways WHERE org_id = $1', [caller.org.id])).toHaveLength(0);
    // Removing again changes nothing (no rev bump).
    await remove(here);
    expect((await liveCaller()).org.gatewayRev).toBe(before + 1);
  });

  it('the key is stored sealed: the column never holds it, and it opens only in its own row', async () => {
    const registry = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    const key = `sola_${randomBytes(12).toString('hex')}`;
    await configure(registry, key);
    const caller = await liveCaller();
    const [row] = await db.query<{ key_sealed: string; key_last4: string; kek_id: string }>(
      'SELECT key_sealed, key_last4, kek_id FROM org_gateways WHERE org_id = $1',
      [caller.org.id],
    );
    expect(row!.key_sealed).not.toContain(key);
    expect(row!.key_sealed).not.toContain(key.slice(5));
    expect(row!.key_last4).toBe(key.slice(-4));
    expect(row!.kek_id).toBe(inner.id);
    expect(inner.open(row!.key_sealed, orgGatewayAad(caller.org.id))).toBe(key);
    // Nothing else in the database holds it either (the admin event names only its last 4).
    const events = await db.query<{ detail: unknown }>('SELECT detail FROM admin_events WHERE org_id = $1', [
      caller.org.id,
    ]);
    expect(events.length).toBeGreaterThan(0);
    expect(JSON.stringify(events)).not.toContain(key);

    // The sealed key copied into another organisation's row does not open there.
    const other = await createOrg(db, 'Other Org');
    const otherLive = (await createApiKey(db, other.orgGuid, false, null)).apiKey;
    await configure(registry, `sola_${randomBytes(12).toString('hex')}`, null, other.orgGuid);
    const otherCaller = await liveCaller(otherLive);
    await db.query('UPDATE org_gateways SET key_sealed = $2 WHERE org_id = $1', [
      otherCaller.org.id,
      row!.key_sealed,
    ]);
    await db.query('UPDATE orgs SET gateway_rev = gateway_rev + 1 WHERE id = $1', [otherCaller.org.id]);
    const fresh = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    await expect(fresh.forCaller(await liveCaller(otherLive))).rejects.toThrow(/does not open/);
  });

  it('a key sealed under an unknown KEK is an error, not a silent "no gateway"', async () => {
    const registry = createGatewayRegistry({ db, sandbox, kek: inner, providers });
    await configure(registry, `sola_${randomBytes(12).toString('hex')}`);
    const elsewhere = createGatewayRegistry({
      db,
      sandbox,
      kek: keyEncryptionKey(randomBytes(32)),
      providers,
    });
    await expect(elsewhere.forCaller(await liveCaller())).rejects.toThrow(
      /key does not open: sealed under key [0-9a-f]{8}, which is neither the current key/,
    );
    // The sandbox is unaffected.
    expect(await elsewhere.forCaller(await sandboxCaller())).toBe(sandbox);
  });

  it('by default a Sola gateway is built, calling the configured URL with the opened key', async () => {
    const seen: { url: string; body: Record<string, unknown> }[] = [];
    const emulator = createServer((req: IncomingMessage, res) => {
      let text = '';
      req.on('data', (d) => {
        text += d;
      });
      req.on('end', () => {
        seen.push({ url: req.url ?? '', body: JSON.parse(text || '{}') });
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ xResult: 'A', xStatus: 'Approved', xRefNum: '123', xError: '' }));
      });
    });
    await new Promise<void>((r) => emulator.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(emulator.address() as AddressInfo).port}/gatewayjson`;
      const registry = createGatewayRegistry({ db, sandbox, kek: inner });
      const key = `sola_${randomBytes(12).toString('hex')}`;
      await configure(registry, key, url);
      const gateway = await registry.forCaller(await liveCaller());
      expect(gateway?.name).toBe('Sola');
      await gateway!.void({ gatewayRef: '123', idempotencyKey: 'void-1', method: 'Credit_Card' });
      expect(seen).toHaveLength(1);
      expect(seen[0]!.url).toBe('/gatewayjson');
      expect(seen[0]!.body.xKey).toBe(key);
    } finally {
      await new Promise<void>((r) => emulator.close(() => r()));
    }
  });
});
