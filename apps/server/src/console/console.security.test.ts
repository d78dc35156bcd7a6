/**
 * The console's data endpoints through the real stack (app → /console/api → session, CSRF, audit
 * → consoleDataRoutes), signed in with real sessions: for EVERY data endpoint, a user of another
 * organisation gets 404 for this organisation's ids (or, where the endpoint takes no id, sees
 * none of its data, and may not name an organisation); a viewer gets 403 on every changing
 * endpoint, a manager on every owner-only one. The cases are checked against the routes of
 * `consoleDataRoutes()`: a new endpoint without a case here fails this test.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOrg } from '../admin/admin-service.ts';
import { createGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
import { type ConsoleSession, consoleSignIn } from '../testing/console-session.ts';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { consoleDataRoutes } from './data-routes.ts';

/** What a user of another organisation gets: 404 for our id; or, without an id, none of our data. */
type Foreign = { status: 404 } | { status: 200; leaks: false } | { status: 400; orgRefused: true };

interface Case {
  path: string;
  body?: unknown;
  foreign: Foreign;
  /** The least role: a viewer is refused every changing endpoint, a manager the owner's. */
  role: 'viewer' | 'manager' | 'owner';
}

// PGlite's start, the migrations and a scrypt per sign-in are slow on a busy machine (as session.test.ts).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

describe.each(await testDatabases())('console data endpoints: organisation scope and roles on %s', (kind) => {
  let h: Harness;
  let viewer: ConsoleSession;
  let manager: ConsoleSession;
  let owner: ConsoleSession;
  let other: ConsoleSession;
  let cases: Record<string, Case>;
  /** Strings of this organisation's data that another organisation's answers must never contain. */
  let secrets: string[];

  beforeAll(async () => {
    const kek = keyEncryptionKey(randomBytes(32));
    h = await createHarness(kind, {
      gateways: (db) => createGatewayRegistry({ db, sandbox: sandboxGateway(), kek }),
    });
    const b = await createOrg(h.db, 'Other Org');
    viewer = await consoleSignIn(h, { role: 'viewer' });
    manager = await consoleSignIn(h, { role: 'manager' });
    owner = await consoleSignIn(h, { role: 'owner' });
    other = await consoleSignIn(h, { role: 'owner', orgGuid: b.orgGuid });

    // This organisation's things, made through its own endpoints.
    const ok = <T>(r: { status: number; body: T }, status = 200): T => {
      expect(r.status, JSON.stringify(r.body)).toBe(status);
      return r.body;
    };
    ok(await manager.request('PATCH', '/settings', { scheduleMode: 'Internal', webhooksAllSources: true }));
    ok(await manager.request('PUT', '/webhooks/payment', { url: 'https://example.org/hook' }));
    const campaign = ok(await manager.request('PUT', '/campaigns/new', { campaignName: 'Scoped campaign' }));
    const reason = ok(await manager.request('PUT', '/reasons/new', { reasonName: 'Scoped reason' }));
    const collector = ok(
      await manager.request('PUT', '/collectors/new', { firstName: 'Scoped', lastName: 'Collector' }),
    );
    const pay = ok(
      await h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody(h, { amount: 77, donor: { firstName: 'Scoped', lastName: 'Donor' } }),
        sourceAuth(h),
      ),
    );
    const pay2 = ok(
      await h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody(h, { amount: 78, donor: { firstName: 'Second', lastName: 'Donor' } }),
        sourceAuth(h),
      ),
    );
    const schedule = ok(
      await h.request(
        'POST',
        '/v1/External/SchedulePayment',
        chargeBody(h, {
          uniqueTransactionId: randomUUID(),
          amount: undefined,
          donor: { accountNum: pay.accountNum },
          scheduleDetails: {
            startDate: new Date().toISOString().slice(0, 10),
            frequencyID: 'Monthly',
            amountPerPayment: 10,
            totalPaymentsCount: 3,
          },
        }),
        keyAuth(h),
      ),
    );
    const device = ok(await manager.request('POST', '/devices', { name: 'Scoped kiosk' }), 201);
    const apiKey = ok(await owner.request('POST', '/api-keys', { name: 'Scoped key' }), 201);
    const source = ok(await owner.request('POST', '/sources', { name: 'Scoped form' }), 201);
    const delivery = ok(await manager.request('GET', '/deliveries')).deliveries[0];
    expect(delivery).toBeDefined();
    secrets = [pay.receiptNum, pay.accountNum, 'Scoped', device.deviceId, apiKey.masked, 'example.org/hook'];

    const receipt = pay.receiptNum as string;
    const donor = pay.accountNum as string;
    const sched = schedule.scheduleNum as number;
    const list: Foreign = { status: 200, leaks: false };
    const notFound: Foreign = { status: 404 };
    cases = {
      'GET /dashboard': { path: '/dashboard?range=30d', foreign: list, role: 'viewer' },
      'GET /payments': { path: '/payments', foreign: list, role: 'viewer' },
      'GET /payments.csv': { path: '/payments.csv', foreign: list, role: 'viewer' },
      'GET /payments/:receiptNum': { path: `/payments/${receipt}`, foreign: notFound, role: 'viewer' },
      'POST /payments/:receiptNum/void': {
        path: `/payments/${receipt}/void`,
        body: { reason: 'x' },
        foreign: notFound,
        role: 'manager',
      },
      'POST /payments/:receiptNum/refund': {
        path: `/payments/${receipt}/refund`,
        body: { amountMinor: 100, reason: 'x', uniqueTransactionId: 'console-refund-0001' },
        foreign: notFound,
        role: 'manager',
      },
      'GET /schedules': { path: '/schedules', foreign: list, role: 'viewer' },
      'GET /schedules/:scheduleNum': { path: `/schedules/${sched}`, foreign: notFound, role: 'viewer' },
      'POST /schedules/:scheduleNum/:action{pause|resume|cancel}': {
        path: `/schedules/${sched}/pause`,
        foreign: notFound,
        role: 'manager',
      },
      'GET /donors': { path: '/donors', foreign: list, role: 'viewer' },
      'POST /donors/merge': {
        path: '/donors/merge',
        body: { keep: donor, merge: pay2.accountNum },
        foreign: notFound,
        role: 'manager',
      },
      'GET /donors/:accountNum': { path: `/donors/${donor}`, foreign: notFound, role: 'viewer' },
      'PUT /donors/:accountNum': {
        path: `/donors/${donor}`,
        body: { firstName: 'Changed' },
        foreign: notFound,
        role: 'manager',
      },
      'GET /collectors': { path: '/collectors', foreign: list, role: 'viewer' },
      'PUT /collectors/:code': {
        path: `/collectors/${collector.collectorId}`,
        body: { firstName: 'Changed' },
        foreign: notFound,
        role: 'manager',
      },
      'GET /campaigns': { path: '/campaigns', foreign: list, role: 'viewer' },
      'PUT /campaigns/:code': {
        path: `/campaigns/${campaign.campaignNumber}`,
        body: { campaignName: 'Changed' },
        foreign: notFound,
        role: 'manager',
      },
      'GET /reasons': { path: '/reasons', foreign: list, role: 'viewer' },
      'PUT /reasons/:code': {
        path: `/reasons/${reason.reasonNumber}`,
        body: { reasonName: 'Changed' },
        foreign: notFound,
        role: 'manager',
      },
      'GET /devices': { path: '/devices', foreign: list, role: 'viewer' },
      'POST /devices': {
        path: '/devices',
        body: { name: 'Theirs', orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'manager',
      },
      'PATCH /devices/:deviceId': {
        path: `/devices/${device.deviceId}`,
        body: { name: 'Changed' },
        foreign: notFound,
        role: 'manager',
      },
      'POST /devices/:deviceId/revoke': {
        path: `/devices/${device.deviceId}/revoke`,
        foreign: notFound,
        role: 'manager',
      },
      'GET /shifts': { path: '/shifts', foreign: list, role: 'viewer' },
      'GET /integrations': { path: '/integrations', foreign: list, role: 'manager' },
      'POST /api-keys': {
        path: '/api-keys',
        body: { name: 'Theirs', orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'owner',
      },
      'POST /api-keys/:id/revoke': {
        path: `/api-keys/${apiKey.id}/revoke`,
        foreign: notFound,
        role: 'owner',
      },
      'POST /sources': {
        path: '/sources',
        body: { name: 'Theirs', orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'owner',
      },
      'POST /sources/:id/revoke': { path: `/sources/${source.id}/revoke`, foreign: notFound, role: 'owner' },
      'PUT /webhooks/:kind': {
        path: '/webhooks/void',
        body: { url: 'https://theirs.example.net/hook', orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'manager',
      },
      // Only this organisation has a payment endpoint: the other's rotation finds none.
      'POST /webhooks/:kind/rotate': { path: '/webhooks/payment/rotate', foreign: notFound, role: 'manager' },
      'GET /deliveries': { path: '/deliveries', foreign: list, role: 'manager' },
      'GET /deliveries/:id/attempts': {
        path: `/deliveries/${delivery.id}/attempts`,
        foreign: notFound,
        role: 'manager',
      },
      'POST /deliveries/:id/replay': {
        path: `/deliveries/${delivery.id}/replay`,
        foreign: notFound,
        role: 'manager',
      },
      'PUT /gateway': {
        path: '/gateway',
        body: { provider: 'none', orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'owner',
      },
      'GET /settings': { path: '/settings', foreign: list, role: 'viewer' },
      'PATCH /settings': {
        path: '/settings',
        body: { il: true, orgGuid: h.org.orgGuid },
        foreign: { status: 400, orgRefused: true },
        role: 'manager',
      },
    };
  });
  afterAll(async () => {
    await h?.close();
  });

  const methodOf = (key: string) => key.slice(0, key.indexOf(' '));

  it('has a case for every data endpoint', () => {
    const routes = [...new Set(consoleDataRoutes().routes.map((r) => `${r.method} ${r.path}`))].filter(
      (r) => !r.startsWith('ALL '),
    );
    expect(Object.keys(cases).sort()).toEqual(routes.sort());
  });

  it('is served behind the session: without one every data endpoint is 401', async () => {
    for (const [key, c] of Object.entries(cases)) {
      const r = await h.request(methodOf(key), `/console/api${c.path}`, c.body);
      expect(r.status, key).toBe(401);
    }
  });

  it("another organisation's ids answer 404, its lists hold none of our data, and no endpoint takes an organisation", async () => {
    for (const [key, c] of Object.entries(cases)) {
      const r = await other.request(methodOf(key), c.path, c.body);
      expect(r.status, `${key}: ${JSON.stringify(r.body)}`).toBe(c.foreign.status);
      if ('leaks' in c.foreign) {
        const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
        for (const s of secrets) expect(text, `${key} shows ${s}`).not.toContain(s);
      }
      if ('orgRefused' in c.foreign) {
        expect(r.body.error.errorCode, key).toBe('UNKNOWN_FIELD');
        expect(
          r.body.error.fields.map((f: { field: string }) => f.field),
          key,
        ).toContain('orgGuid');
      }
    }
    // Nothing of ours changed.
    const mine = (await manager.request('GET', `${cases['GET /donors/:accountNum']!.path}`)).body;
    expect(mine.donor.firstName).toBe('Scoped');
    expect((await manager.request('GET', cases['GET /payments/:receiptNum']!.path)).body.status).toBe(
      'Success',
    );
  });

  it('a viewer is refused every changing endpoint, a manager every owner-only one', async () => {
    for (const [key, c] of Object.entries(cases)) {
      const method = methodOf(key);
      if (method === 'GET' && c.role === 'viewer') {
        expect((await viewer.request(method, c.path)).status, key).toBe(200);
        continue;
      }
      const v = await viewer.request(method, c.path, c.body);
      expect(v.status, key).toBe(403);
      expect(v.body.error.errorCode, key).toBe('FORBIDDEN');
      if (c.role === 'owner') expect((await manager.request(method, c.path, c.body)).status, key).toBe(403);
    }
    // …and nothing changed.
    expect(
      (await owner.request('GET', '/integrations')).body.apiKeys.every(
        (k: { revokedAt: null }) => k.revokedAt === null,
      ),
    ).toBe(true);
  });
});
