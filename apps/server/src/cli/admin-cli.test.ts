import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashCredential } from '../auth/credentials.ts';
import { findApiKeyCaller } from '../auth/repo.ts';
import type { Gateway, GatewayResult } from '../gateway/gateway.ts';
import { createGatewayRegistry, type GatewayFactory, staticGatewayRegistry } from '../gateway/registry.ts';
import { sandboxGateway } from '../gateway/sandbox-gateway.ts';
import { keyEncryptionKey } from '../secrets/key-encryption.ts';
import { ADMIN_TOKEN, chargeBody, createHarness, type Harness } from '../testing/harness.ts';
import { startReceiver } from '../testing/receiver.ts';
import { startSolaEmulator } from '../testing/sola-emulator.ts';
import { webhookDispatcher } from '../webhooks/dispatcher.ts';
import { type CliIo, run } from './admin-cli.ts';

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
  // biome-ignore lint/suspicious/noExplicitAny: CLI answers are read field by field.
  json: any;
}

async function cli(
  argv: string[],
  env: NodeJS.ProcessEnv = {},
  extra: Partial<CliIo> = {},
): Promise<Outcome> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    env,
    ...extra,
  });
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {
    json = undefined;
  }
  return { code, stdout, stderr, json };
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/**
 * `org gateway … --key K` as an operator runs it: the key in GATEWAY_KEY, never on the command line
 * (the CLI refuses --key there). Other commands, and a --key without a value, are left as they are.
 */
function keyToEnv(argv: string[]): { argv: string[]; env: Record<string, string> } {
  const i = argv.indexOf('--key');
  if (argv[0] !== 'org' || argv[1] !== 'gateway' || i < 0 || i + 1 >= argv.length) return { argv, env: {} };
  return { argv: [...argv.slice(0, i), ...argv.slice(i + 2)], env: { GATEWAY_KEY: argv[i + 1]! } };
}

const expectUsageError = (o: Outcome, pattern?: RegExp) => {
  expect(o.code).toBe(2);
  expect(o.stdout).toBe('');
  expect(o.stderr).toMatch(/^error: [^\n]+\n$/);
  if (pattern) expect(o.stderr).toMatch(pattern);
};

describe('admin CLI against a real server', () => {
  let h: Harness;
  let url: string;
  /** Runs the CLI with --server (the admin listener), --json and ADMIN_TOKEN in its environment. */
  const admin = (...argv: string[]) => cli([...argv, '--server', url, '--json'], { ADMIN_TOKEN });

  beforeAll(async () => {
    h = await createHarness('pglite');
    url = await h.listenAdmin();
  });
  afterAll(async () => {
    await h?.close();
  });

  const saveCampaign = (orgGuid: string, apikey: string) =>
    h.request(
      'PUT',
      '/V1/External/SaveCampaign',
      { orgGuid, campaignNumber: 0, campaignName: 'X' },
      { apikey },
    );

  const newOrg = async (...more: string[]) => {
    const o = await admin('org', 'create', '--name', 'Beth Israel', ...more);
    expect(o.code).toBe(0);
    return o.json as { orgGuid: string; apiKey: string; sourceGuid: string };
  };

  it('org create prints one JSON line whose apiKey works on the External API', async () => {
    const o = await admin('org', 'create', '--name', 'Beth Israel');
    expect(o.code).toBe(0);
    expect(o.stderr).toBe('');
    expect(o.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(Object.keys(o.json).sort()).toEqual(['apiKey', 'orgGuid', 'sourceGuid']);
    expect(o.json.apiKey).toMatch(/^kpk_test_/);
    const r = await saveCampaign(o.json.orgGuid, o.json.apiKey);
    expect(r.status).toBe(200);
    expect(r.body.orgGuid).toBe(o.json.orgGuid);
  });

  it('without --json the same object is printed as indented JSON', async () => {
    const o = await cli(['org', 'create', '--name', 'Pretty', '--server', url], { ADMIN_TOKEN });
    expect(o.code).toBe(0);
    expect(o.stdout).toContain('\n  "orgGuid": ');
    expect(Object.keys(o.json).sort()).toEqual(['apiKey', 'orgGuid', 'sourceGuid']);
  });

  it('org create --currencies limits the currencies (case-insensitive, deduplicated)', async () => {
    const { orgGuid } = await newOrg('--currencies', 'usd, ILS,USD');
    const show = await admin('org', 'show', '--org', orgGuid);
    expect(show.code).toBe(0);
    expect(show.json.currencies).toEqual(['USD', 'ILS']);
  });

  it('org settings sets webhooks and prints their whsec_ signing secrets; empty or none removes them', async () => {
    const { orgGuid } = await newOrg();
    const set = await admin(
      'org',
      'settings',
      '--org',
      orgGuid,
      '--payment-webhook',
      'https://hooks.example.org/payment',
      '--schedule-webhook',
      'https://hooks.example.org/schedule',
      '--void-webhook',
      'http://hooks.example.org/void',
    );
    expect(set.code).toBe(0);
    expect(set.stderr).toBe('');
    for (const kind of ['payment', 'schedule', 'void']) {
      expect(set.json.webhookSecrets[kind].url).toMatch(new RegExp(`/${kind}$`));
      expect(set.json.webhookSecrets[kind].secret).toMatch(/^whsec_/);
    }
    expect(set.json.webhooks.map((w: { kind: string }) => w.kind).sort()).toEqual([
      'payment',
      'schedule',
      'void',
    ]);

    const removed = await admin(
      'org',
      'settings',
      '--org',
      orgGuid,
      '--payment-webhook',
      '',
      '--void-webhook',
      'none',
    );
    expect(removed.code).toBe(0);
    expect(removed.json.webhookSecrets).toBeUndefined();
    expect(removed.json.webhooks.map((w: { kind: string }) => w.kind)).toEqual(['schedule']);
  });

  it('schedule mode, il, timezone and the other switches show up in org show', async () => {
    const { orgGuid } = await newOrg();
    const set = await admin(
      'org',
      'settings',
      '--org',
      orgGuid,
      '--schedule-mode',
      'Internal',
      '--il',
      'true',
      '--timezone',
      'Asia/Jerusalem',
      '--shabbat-shift',
      'false',
      '--webhooks-all-sources',
      'TRUE',
      '--currencies',
      'ILS,USD',
    );
    expect(set.code).toBe(0);
    const show = await admin('org', 'show', '--org', orgGuid);
    expect(show.code).toBe(0);
    expect(show.json).toMatchObject({
      orgGuid,
      name: 'Beth Israel',
      currencies: ['ILS', 'USD'],
      settings: {
        scheduleMode: 'Internal',
        il: true,
        timezone: 'Asia/Jerusalem',
        shabbatShift: false,
        webhooksAllSources: true,
      },
      webhooks: [],
    });
  });

  it('rate and offline limits: amounts become minor units; a missing half is kept from the current settings', async () => {
    const { orgGuid } = await newOrg();
    let o = await admin('org', 'settings', '--org', orgGuid, '--rate-per-second', '12.5');
    expect(o.code).toBe(0);
    expect(o.json.settings.rateLimit).toEqual({ perSecond: 12.5, burst: 100 });
    o = await admin('org', 'settings', '--org', orgGuid, '--rate-burst', '30');
    expect(o.json.settings.rateLimit).toEqual({ perSecond: 12.5, burst: 30 });

    o = await admin('org', 'settings', '--org', orgGuid, '--offline-per-payment', '250.5');
    expect(o.code).toBe(0);
    expect(o.json.settings.offline).toEqual({
      perPaymentMinor: 25_050,
      totalMinor: 1_000_000,
      expiryHours: 72,
    });
    o = await admin(
      'org',
      'settings',
      '--org',
      orgGuid,
      '--offline-total',
      '5000',
      '--offline-expiry-hours',
      '24',
    );
    expect(o.json.settings.offline).toEqual({
      perPaymentMinor: 25_050,
      totalMinor: 500_000,
      expiryHours: 24,
    });
    o = await admin(
      'org',
      'settings',
      '--org',
      orgGuid,
      '--offline-per-payment',
      '0.99',
      '--offline-total',
      '10',
      '--offline-expiry-hours',
      '1',
      '--rate-per-second',
      '5',
      '--rate-burst',
      '5',
    );
    expect(o.json.settings.offline).toEqual({ perPaymentMinor: 99, totalMinor: 1000, expiryHours: 1 });
    expect(o.json.settings.rateLimit).toEqual({ perSecond: 5, burst: 5 });
  });

  it('apikey create makes a working key; apikey revoke makes it 401', async () => {
    const { orgGuid } = await newOrg();
    const created = await admin('apikey', 'create', '--org', orgGuid, '--sandbox', '--name', 'CRM');
    expect(created.code).toBe(0);
    expect(created.json).toEqual({ orgGuid, apiKey: expect.stringMatching(/^kpk_test_/), sandbox: true });
    expect((await saveCampaign(orgGuid, created.json.apiKey)).status).toBe(200);

    const live = await admin('apikey', 'create', '--org', orgGuid);
    expect(live.json).toEqual({ orgGuid, apiKey: expect.stringMatching(/^kpk_live_/), sandbox: false });

    const revoked = await admin('apikey', 'revoke', '--org', orgGuid, '--key', created.json.apiKey);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({ orgGuid, revoked: true });
    expect((await saveCampaign(orgGuid, created.json.apiKey)).status).toBe(401);

    const again = await admin('apikey', 'revoke', '--org', orgGuid, '--key', created.json.apiKey);
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('error: That API key was not found\n');
    expect(again.json).toEqual({ error: { errorCode: 'NOT_FOUND', message: 'That API key was not found' } });
  });

  it('device create gives a pairing code that pairs; device list shows it; revoke refuses its pushes; key rotation', async () => {
    const { orgGuid } = await newOrg();
    const created = await admin('device', 'create', '--org', orgGuid, '--name', 'Kiosk 1', '--sandbox');
    expect(created.code).toBe(0);
    expect(created.json).toMatchObject({ orgGuid, name: 'Kiosk 1', sandbox: true });
    expect(created.json.pairingCode).toMatch(/^[A-Z2-9]{4}-[A-Z2-9]{4}$/);
    const paired = await h.request('POST', '/v1/Device/Pair', { pairingCode: created.json.pairingCode });
    expect(paired.status).toBe(200);
    const list = await admin('device', 'list', '--org', orgGuid);
    expect(list.json.devices).toEqual([
      expect.objectContaining({ deviceId: created.json.deviceId, name: 'Kiosk 1', status: 'paired' }),
    ]);
    const revoked = await admin('device', 'revoke', '--org', orgGuid, '--device', created.json.deviceId);
    expect(revoked.code).toBe(0);
    expect(revoked.json.device.status).toBe('revoked');
    const pull = await h.request('GET', '/v1/Device/Sync/Pull', undefined, {
      authorization: paired.body.credential,
    });
    expect(pull.body.error.errorCode).toBe('DEVICE_REVOKED');
    const missing = await admin('device', 'revoke', '--org', orgGuid, '--device', 'dev_nosuchdevice');
    expect(missing.code).toBe(1);

    const before = await admin('device', 'keys');
    const rotated = await admin('device', 'rotate-key');
    expect(rotated.code).toBe(0);
    expect(rotated.json.keys).toHaveLength(before.json.keys.length + 1);
    const current = await admin('device', 'retire-key', '--kid', rotated.json.kid);
    expect(current.code).toBe(1);
    expect(current.stderr).toContain('current key');
    // --org rotates that organisation's key alone.
    const keysOf = (j: { keys: { orgGuid: string | null }[] }) => j.keys.filter((k) => k.orgGuid === orgGuid);
    const mid = (await admin('device', 'keys')).json;
    const one = await admin('device', 'rotate-key', '--org', orgGuid);
    expect(one.code).toBe(0);
    expect(one.json.kid).toEqual(expect.any(String));
    expect(keysOf(one.json)).toHaveLength(keysOf(mid).length + 1);
    expect(one.json.keys).toHaveLength(mid.keys.length + 1);
    expect((await admin('device', 'create', '--org', orgGuid)).code).toBe(2);
  });

  it('source create (device, sandbox) can charge; source revoke makes it 401', async () => {
    const { orgGuid } = await newOrg();
    const created = await admin(
      'source',
      'create',
      '--org',
      orgGuid,
      '--name',
      'Lobby kiosk',
      '--kind',
      'device',
      '--sandbox',
    );
    expect(created.code).toBe(0);
    expect(created.json).toEqual({
      orgGuid,
      sourceGuid: expect.any(String),
      name: 'Lobby kiosk',
      kind: 'device',
      sandbox: true,
    });
    const charge = () =>
      h.request('POST', '/v1/External/Charge', chargeBody(h, { orgGUID: orgGuid }), {
        authorization: created.json.sourceGuid,
      });
    const ok = await charge();
    expect(ok.status).toBe(200);
    expect(ok.body.paymentStatus).toBe('Success');

    const revoked = await admin('source', 'revoke', '--org', orgGuid, '--source', created.json.sourceGuid);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toEqual({ orgGuid, revoked: true });
    expect((await charge()).status).toBe(401);
  });

  it.each([
    [['org', 'create', '--name', 'X', '--bogus'], /unknown flag --bogus/],
    [['org', 'create', '--name', 'X', '-x'], /unknown flag -x/],
    [['org', 'create', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b'], /unknown flag --org/],
    [['org', 'create'], /--name is required/],
    [['org', 'create', '--name'], /--name needs a value/],
    [['org', 'create', '--name', '  '], /--name must not be empty/],
    [['org', 'create', '--name', 'X', '--json=yes'], /--json takes no value/],
    [['org', 'create', '--name', 'X', 'extra'], /unexpected argument extra/],
    [
      ['org', 'create', '--name', 'X', '--currencies', 'USD,XYZ'],
      /--currencies must be a comma-separated list/,
    ],
    [['org', 'create', '--name', 'X', '--currencies', ','], /--currencies must name at least one/],
    [['org', 'show'], /--org is required/],
    [['org', 'show', '--org', 'not-a-guid'], /--org must be a GUID/],
    [['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b'], /give at least one setting/],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--il', 'maybe'],
      /--il must be true or false/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--schedule-mode', 'Cron'],
      /--schedule-mode/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--timezone', 'Mars/Base'],
      /--timezone/,
    ],
    [
      [
        'org',
        'settings',
        '--org',
        '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b',
        '--payment-webhook',
        'ftp://x.example',
      ],
      /--payment-webhook must be an http\(s\) URL/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--rate-burst', '1.5'],
      /--rate-burst/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--rate-per-second', '0'],
      /more than 0/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--offline-total', '1.234'],
      /--offline-total/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--offline-expiry-hours', '73'],
      /at most 72/,
    ],
    [
      ['org', 'settings', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--il', 'maybe', '--kind', 'x'],
      /unknown flag --kind/,
    ],
    [
      ['source', 'create', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--name', 'A', '--kind', 'robot'],
      /--kind must be device or external \(got "robot"\)/,
    ],
    [
      ['source', 'create', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', '--kind', 'device'],
      /--name is required/,
    ],
    [['apikey', 'revoke', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b'], /--key is required/],
    [['source', 'revoke', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b'], /--source is required/],
    [['widget', 'create'], /unknown command "widget"/],
    [['org', 'frob'], /org: unknown command "frob"/],
    [['org'], /org: missing command/],
    [[], /missing command/],
  ])('bad invocation %j → exit 2, one line on stderr', async (argv, pattern) => {
    expectUsageError(await admin(...(argv as string[])), pattern);
  });

  it('webhook list, attempts, replay (by id and since), rotate and events operate on deliveries', async () => {
    const { orgGuid } = await newOrg();
    const rx = await startReceiver();
    try {
      rx.respond = () => 503;
      await admin('org', 'settings', '--org', orgGuid, '--payment-webhook', `${rx.url}/p`);
      const src = await admin(
        'source',
        'create',
        '--org',
        orgGuid,
        '--name',
        'K',
        '--kind',
        'device',
        '--sandbox',
      );
      await h.request('POST', '/v1/External/Charge', chargeBody(h, { orgGUID: orgGuid }), {
        authorization: src.json.sourceGuid,
      });
      const dispatcher = webhookDispatcher(h.deps, { allowPrivate: true });
      await dispatcher.drain();
      const list = await admin('webhook', 'list', '--org', orgGuid, '--status', 'pending');
      expect(list.code).toBe(0);
      expect(list.json.deliveries).toHaveLength(1);
      const id = String(list.json.deliveries[0].id);
      const attempts = await admin('webhook', 'attempts', '--org', orgGuid, '--delivery', id);
      expect(attempts.json.attempts).toEqual([expect.objectContaining({ attempt: 1, statusCode: 503 })]);
      rx.respond = () => 200;
      expect((await admin('webhook', 'replay', '--org', orgGuid, '--delivery', id)).json.replayed).toBe(1);
      await dispatcher.drain();
      expect(rx.received.at(-1)).toMatchObject({ status: 200, webhookId: list.json.deliveries[0].webhookId });
      const since = await admin(
        'webhook',
        'replay',
        '--org',
        orgGuid,
        '--failed-since',
        '2020-01-01T00:00:00Z',
      );
      expect(since.json.replayed).toBe(0);
      expectUsageError(
        await admin('webhook', 'replay', '--org', orgGuid),
        /exactly one of --delivery or --failed-since/,
      );
      const rotated = await admin('webhook', 'rotate', '--org', orgGuid, '--kind', 'payment');
      expect(rotated.json.secret).toMatch(/^whsec_/);
      expect((await admin('webhook', 'rotate', '--org', orgGuid, '--kind', 'void')).code).toBe(1);
      expect((await admin('webhook', 'events', '--org', orgGuid)).json.events).toEqual([]);
      expectUsageError(await admin('webhook', 'list', '--org', orgGuid, '--status', 'lost'));
    } finally {
      await rx.close();
    }
  });

  it('several bad values are reported together on one line', async () => {
    const o = await admin(
      'org',
      'settings',
      '--org',
      '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b',
      '--il',
      'maybe',
      '--currencies',
      'XYZ',
    );
    expectUsageError(o, /--currencies .*; --il must be true or false/);
  });

  it('a bad --server or KUPAH_ADMIN_URL is a usage error', async () => {
    expectUsageError(
      await cli(['org', 'show', '--org', h.org.orgGuid, '--server', 'ftp://x']),
      /--server must/,
    );
    expectUsageError(
      await cli(['org', 'show', '--org', h.org.orgGuid], { ADMIN_TOKEN, KUPAH_ADMIN_URL: 'nope' }),
      /KUPAH_ADMIN_URL must/,
    );
  });

  it('KUPAH_ADMIN_URL and ADMIN_TOKEN come from the environment', async () => {
    const o = await cli(['org', 'show', '--org', h.org.orgGuid, '--json'], {
      KUPAH_ADMIN_URL: `${url}/`,
      ADMIN_TOKEN,
    });
    expect(o.code).toBe(0);
    expect(o.json.orgGuid).toBe(h.org.orgGuid);
  });

  it('a server error is exit 1: its message on stderr, and with --json its body on stdout', async () => {
    const missing = '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b';
    const o = await admin('org', 'show', '--org', missing);
    expect(o.code).toBe(1);
    expect(o.stderr).toBe(`error: Organisation ${missing} was not found\n`);
    expect(o.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(o.json).toEqual({
      error: { errorCode: 'NOT_FOUND', message: `Organisation ${missing} was not found` },
    });

    const plain = await cli(['org', 'show', '--org', missing, '--server', url], { ADMIN_TOKEN });
    expect(plain.code).toBe(1);
    expect(plain.stdout).toBe('');
    expect(plain.stderr).toBe(`error: Organisation ${missing} was not found\n`);
  });

  it('a wrong admin token is exit 1 with the server message and where the token came from', async () => {
    const o = await cli(['org', 'show', '--org', h.org.orgGuid, '--server', url], {
      ADMIN_TOKEN: 'wrong-token-0123456789-0123456789',
    });
    expect(o.code).toBe(1);
    expect(o.stdout).toBe('');
    expect(o.stderr).toMatch(
      /^error: Admin API: send Authorization: Bearer <ADMIN_TOKEN> \(the token from ADMIN_TOKEN was refused\)\n$/,
    );
  });

  it('an unreachable server is exit 1 with one line', async () => {
    const dead = `http://127.0.0.1:${await closedPort()}`;
    const o = await cli(['org', 'show', '--org', h.org.orgGuid, '--server', dead, '--json'], { ADMIN_TOKEN });
    expect(o.code).toBe(1);
    expect(o.stdout).toBe('');
    expect(o.stderr).toBe(`error: cannot reach the server at ${dead} (is it running? npm start)\n`);
  });

  it('an answer that is not a kupah error body is exit 1 with one line', async () => {
    const fakeFetch = (async () =>
      new Response('<html>\n<body>Bad gateway</body>\n</html>', { status: 502 })) as unknown as typeof fetch;
    const o = await cli(['org', 'show', '--org', h.org.orgGuid], { ADMIN_TOKEN }, { fetch: fakeFetch });
    expect(o.code).toBe(1);
    expect(o.stdout).toBe('');
    expect(o.stderr).toBe(
      `error: the server at http://127.0.0.1:8788 answered HTTP 502 (is --server a kupah server?)\n`,
    );
  });

  describe('the admin token file', () => {
    let dir: string;
    beforeAll(() => {
      dir = mkdtempSync(join(tmpdir(), 'kupah-cli-'));
    });
    afterAll(() => {
      rmSync(dir, { recursive: true, force: true });
    });

    it('is read from DATA_DIR/admin-token (DATA_DIR relative to INIT_CWD) when no --token-file or ADMIN_TOKEN', async () => {
      mkdirSync(join(dir, 'data'), { recursive: true });
      writeFileSync(join(dir, 'data', 'admin-token'), `${ADMIN_TOKEN}\n`, { mode: 0o600 });
      const argv = ['org', 'show', '--org', h.org.orgGuid, '--server', url, '--json'];
      const relative = await cli(argv, { INIT_CWD: dir });
      expect(relative.code).toBe(0);
      expect(relative.json.orgGuid).toBe(h.org.orgGuid);
      const absolute = await cli(argv, { DATA_DIR: join(dir, 'data') });
      expect(absolute.code).toBe(0);
    });

    it('missing everywhere is a usage error naming the file', async () => {
      const o = await cli(['org', 'show', '--org', h.org.orgGuid, '--server', url], {
        DATA_DIR: join(dir, 'nowhere'),
      });
      expectUsageError(o, /no admin token: .*nowhere\/admin-token/);
    });

    it('--token-file PATH is read (relative to INIT_CWD) and beats ADMIN_TOKEN', async () => {
      writeFileSync(join(dir, 'other-token'), `${ADMIN_TOKEN}\n`, { mode: 0o600 });
      const argv = ['org', 'show', '--org', h.org.orgGuid, '--server', url, '--json'];
      const o = await cli([...argv, '--token-file', 'other-token'], {
        INIT_CWD: dir,
        ADMIN_TOKEN: 'wrong-token-0123456789-0123456789',
      });
      expect(o.code).toBe(0);
      expect(o.json.orgGuid).toBe(h.org.orgGuid);
      expectUsageError(
        await cli([...argv, '--token-file', join(dir, 'absent')]),
        /--token-file: cannot read .*absent \(ENOENT\)/,
      );
    });

    it('a token given on the command line (--token) is refused before any request, and never repeated', async () => {
      const secret = `adm_${randomBytes(24).toString('hex')}`;
      let requests = 0;
      const counting = (async () => {
        requests++;
        return new Response('{}');
      }) as unknown as typeof fetch;
      for (const argv of [
        ['org', 'show', '--org', h.org.orgGuid, '--server', url, '--token', secret],
        ['--token', secret, 'org', 'show', '--org', h.org.orgGuid],
        ['org', 'show', '--org', h.org.orgGuid, `--token=${secret}`],
        ['org', 'show', '--help', '--token', secret],
      ]) {
        const o = await cli(argv, {}, { fetch: counting });
        expectUsageError(
          o,
          /--token is not accepted: .*visible to other users.*ADMIN_TOKEN.*--token-file PATH/,
        );
        expect(o.stderr).not.toContain(secret);
      }
      expect(requests).toBe(0);
    });
  });
});

describe('admin CLI --help', () => {
  const commands: [string, string, string[]][] = [
    ['org', 'create', ['--name', '--currencies']],
    ['org', 'show', ['--org']],
    [
      'org',
      'settings',
      [
        '--org',
        '--currencies',
        '--payment-webhook',
        '--schedule-webhook',
        '--void-webhook',
        '--schedule-mode',
        '--il',
        '--timezone',
        '--shabbat-shift',
        '--webhooks-all-sources',
        '--rate-per-second',
        '--rate-burst',
        '--offline-per-payment',
        '--offline-total',
        '--offline-expiry-hours',
      ],
    ],
    ['apikey', 'create', ['--org', '--sandbox', '--name']],
    ['apikey', 'revoke', ['--org', '--key']],
    ['source', 'create', ['--org', '--name', '--kind', '--sandbox']],
    ['source', 'revoke', ['--org', '--source']],
    ['org', 'gateway', ['--org', '--provider', '--key-file', '--url']],
    ['secrets', 'status', []],
    ['secrets', 'rewrap', []],
    ['audit', 'list', ['--org', '--since', '--limit']],
  ];
  const globals = ['--server', '--token-file', '--json', '--help'];

  it.each(commands)('%s %s --help and -h list every flag, exit 0', async (group, name, flags) => {
    for (const help of ['--help', '-h']) {
      // Help wins over anything else on the line, and needs no server or token.
      const o = await cli([group, name, help, '--bogus']);
      expect(o.code).toBe(0);
      expect(o.stderr).toBe('');
      for (const f of [...flags, ...globals]) expect(o.stdout).toContain(`${f} `);
    }
  });

  it.each(['org', 'apikey', 'source', 'secrets', 'audit'])(
    '%s --help lists its commands and their flags',
    async (group) => {
      const o = await cli([group, '--help']);
      expect(o.code).toBe(0);
      expect(o.stderr).toBe('');
      for (const [g, name, flags] of commands.filter(([g]) => g === group)) {
        expect(o.stdout).toContain(`${g} ${name}`);
        for (const f of flags) expect(o.stdout).toContain(`${f} `);
      }
    },
  );

  it('--help alone lists every command', async () => {
    const o = await cli(['-h']);
    expect(o.code).toBe(0);
    for (const [g, name] of commands) expect(o.stdout).toContain(`${g} ${name}`);
    for (const f of globals) expect(o.stdout).toContain(f);
  });
});

describe('admin CLI: org gateway and secrets', () => {
  let h: Harness;
  let url: string;
  /** Every key given to the CLI in this block: none may ever appear in any output. */
  const keys: string[] = [];
  const outputs: string[] = [];
  const newKey = () => {
    const k = `sola_${randomBytes(16).toString('hex')}`;
    keys.push(k);
    return k;
  };
  const admin = async (...argv: string[]) => {
    const k = keyToEnv(argv);
    const o = await cli([...k.argv, '--server', url, '--json'], { ADMIN_TOKEN, ...k.env });
    outputs.push(o.stdout, o.stderr);
    return o;
  };
  const oldKek = randomBytes(32);
  const newKek = randomBytes(32);
  const built: { key: string; url: string | null }[] = [];
  const ok: GatewayResult = { status: 'Success', gatewayRef: null, token: null, code: null, message: null };
  const providers: Record<string, GatewayFactory> = {
    sola: (cfg) => {
      built.push(cfg);
      const g: Gateway & { cfg: typeof cfg } = {
        name: 'Sola',
        cfg,
        authorize: async () => ok,
        tokenize: async () => ok,
        void: async () => ok,
        lookup: async () => null,
        refund: async () => ok,
        refunds: () => true,
      };
      return g;
    },
  };
  const registry = (db: Harness['db'], current: Buffer, previous: Buffer | null = null) =>
    createGatewayRegistry({
      db,
      sandbox: sandboxGateway(),
      kek: keyEncryptionKey(current, previous),
      providers,
    });
  /** As if the server were restarted with other keys. */
  const useRegistry = (current: Buffer, previous: Buffer | null = null) => {
    h.deps.gateways = registry(h.db, current, previous);
  };

  beforeAll(async () => {
    h = await createHarness('pglite', { gateways: (db) => registry(db, oldKek) });
    url = await h.listenAdmin();
  });
  afterAll(async () => {
    await h?.close();
    // The key was never printed, on stdout or stderr, by any command above.
    expect(keys.length).toBeGreaterThan(5);
    for (const out of outputs) for (const k of keys) expect(out).not.toContain(k);
  });

  const newOrg = async () => {
    const o = await admin('org', 'create', '--name', 'Gateway Org');
    expect(o.code).toBe(0);
    const live = await admin('apikey', 'create', '--org', o.json.orgGuid);
    return { orgGuid: o.json.orgGuid as string, liveKey: live.json.apiKey as string };
  };
  const gatewayOf = async (apiKey: string) => {
    const caller = await findApiKeyCaller(h.db, hashCredential(apiKey));
    return (await h.deps.gateways.forCaller(caller!)) as (Gateway & { cfg: { key: string } }) | null;
  };

  it('org gateway sets Sola: answers the last 4 only; org show and org settings show it; production reaches it', async () => {
    const { orgGuid, liveKey } = await newOrg();
    const key = newKey();
    const set = await admin('org', 'gateway', '--org', orgGuid, '--provider', 'sola', '--key', key);
    expect(set.code).toBe(0);
    expect(set.stderr).toBe('');
    expect(set.stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(set.json).toEqual({
      orgGuid,
      provider: 'sola',
      url: null,
      keyLast4: key.slice(-4),
      updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    const show = await admin('org', 'show', '--org', orgGuid);
    expect(show.json.gateway).toEqual({ provider: 'sola', url: null, keyLast4: key.slice(-4) });
    const settings = await admin('org', 'settings', '--org', orgGuid, '--il', 'true');
    expect(settings.code).toBe(0);
    expect(settings.json.gateway).toEqual({ provider: 'sola', url: null, keyLast4: key.slice(-4) });

    // Stored sealed; the production credential now reaches a Sola gateway built with the key.
    const [row] = await h.db.query<{ key_sealed: string }>(
      'SELECT g.key_sealed FROM org_gateways g JOIN orgs o ON o.id = g.org_id WHERE o.guid = $1',
      [orgGuid],
    );
    expect(row!.key_sealed).not.toContain(key);
    expect((await gatewayOf(liveKey))?.cfg).toEqual({ key, url: null });

    // --url points the adapter at another endpoint (an emulator); Provider names are case-insensitive.
    const other = newKey();
    const moved = await admin(
      'org',
      'gateway',
      '--org',
      orgGuid,
      '--provider',
      'Sola',
      '--key',
      other,
      '--url',
      'http://127.0.0.1:8999/gatewayjson',
    );
    expect(moved.code).toBe(0);
    expect(moved.json).toMatchObject({ provider: 'sola', url: 'http://127.0.0.1:8999/gatewayjson' });
    expect((await gatewayOf(liveKey))?.cfg).toEqual({ key: other, url: 'http://127.0.0.1:8999/gatewayjson' });
  });

  it('--provider none removes it: org show says null, production reaches no gateway; both are admin events', async () => {
    const { orgGuid, liveKey } = await newOrg();
    const key = newKey();
    await admin('org', 'gateway', '--org', orgGuid, '--provider', 'sola', '--key', key);
    const removed = await admin('org', 'gateway', '--org', orgGuid, '--provider', 'none');
    expect(removed.code).toBe(0);
    expect(removed.json).toMatchObject({ orgGuid, provider: null, url: null, keyLast4: null });
    expect((await admin('org', 'show', '--org', orgGuid)).json.gateway).toBeNull();
    expect(await gatewayOf(liveKey)).toBeNull();
    // The sandbox credential of the org is unaffected throughout.
    const sandboxCaller = await findApiKeyCaller(h.db, hashCredential(liveKey));
    expect((await h.deps.gateways.forCaller({ ...sandboxCaller!, sandbox: true }))?.name).not.toBe('Sola');

    const events = await admin('webhook', 'events', '--org', orgGuid);
    expect(events.json.events.map((e: { kind: string }) => e.kind)).toEqual([
      'gateway_removed',
      'gateway_configured',
    ]);
    expect(events.json.events[1].detail).toMatchObject({
      provider: 'sola',
      url: null,
      keyLast4: key.slice(-4),
    });
  });

  it.each([
    [['--provider', 'stripe', '--key', 'k'.repeat(12)], /--provider must be none or sola \(got "stripe"\)/],
    [
      ['--provider', 'sola'],
      /the key is required with --provider sola: set GATEWAY_KEY or pass --key-file PATH/,
    ],
    [
      ['--provider', 'none', '--key-file', '/nonexistent'],
      /--key-file and --url are not taken with --provider none/,
    ],
    [['--provider', 'none', '--url', 'https://x.example'], /not taken with --provider none/],
    [
      ['--provider', 'sola', '--key', 'k'.repeat(12), '--url', 'ftp://x.example'],
      /--url must be an http\(s\) URL/,
    ],
    [['--key', 'k'.repeat(12)], /--provider is required/],
    [['--provider', 'sola', '--key'], /--key is not taken: a key on the command line is visible/],
  ])('org gateway %j → exit 2, one line', async (argv, pattern) => {
    expectUsageError(
      await admin('org', 'gateway', '--org', '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b', ...argv),
      pattern,
    );
  });

  it('a bad or stray key is refused without repeating it', async () => {
    const org = '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b';
    const short = 'Qz7Short';
    keys.push(short.slice(0, 7), 'has a space in it', 'StrayKeyValue123');
    let o = await admin('org', 'gateway', '--org', org, '--provider', 'sola', '--key', short.slice(0, 7));
    expectUsageError(o, /GATEWAY_KEY must be at least 8 characters$/m);
    o = await admin('org', 'gateway', '--org', org, '--provider', 'sola', '--key', 'has a space in it');
    expectUsageError(o, /GATEWAY_KEY must be printable ASCII without spaces$/m);
    o = await admin('org', 'gateway', '--org', org, '--provider', 'sola', 'StrayKeyValue123');
    expectUsageError(o, /unexpected argument \(not shown/);
  });

  it('the key comes from GATEWAY_KEY or --key-file, never from the command line (ps shows every argument)', async () => {
    const { orgGuid } = await newOrg();
    const key = newKey();
    const onCommandLine = await cli(
      ['org', 'gateway', '--org', orgGuid, '--provider', 'sola', `--key=${key}`, '--server', url, '--json'],
      { ADMIN_TOKEN },
    );
    expectUsageError(onCommandLine, /--key is not taken: .*GATEWAY_KEY.*--key-file PATH/);
    expect(onCommandLine.stdout + onCommandLine.stderr).not.toContain(key);
    expect((await admin('org', 'show', '--org', orgGuid)).json.gateway).toBeNull();

    const dir = mkdtempSync(join(tmpdir(), 'kupah-key-file-'));
    try {
      const file = join(dir, 'sola-key');
      writeFileSync(file, `${key}\n`, { mode: 0o600 });
      const set = await admin('org', 'gateway', '--org', orgGuid, '--provider', 'sola', '--key-file', file);
      expect(set.code).toBe(0);
      expect(set.json).toMatchObject({ provider: 'sola', keyLast4: key.slice(-4) });
      const missing = await admin(
        'org',
        'gateway',
        '--org',
        orgGuid,
        '--provider',
        'sola',
        '--key-file',
        join(dir, 'none'),
      );
      expectUsageError(missing, /--key-file: cannot read .* \(ENOENT\)/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the admin API refuses bad gateway bodies with 400, never echoing the key', async () => {
    const key = newKey();
    const path = `/orgs/${h.org.orgGuid}/gateway`;
    for (const body of [
      { provider: 'stripe', key },
      { provider: 'sola' },
      { provider: 'none', key },
      { provider: 'sola', key, url: 'ftp://x.example' },
      { provider: 'sola', key, extra: 1 },
      { provider: 'sola', key: `${key} ${key}` },
    ]) {
      const r = await h.admin('PUT', path, body);
      expect(r.status).toBe(400);
      expect(r.body.error.errorCode).toBe('extra' in body ? 'UNKNOWN_FIELD' : 'VALIDATION_FAILED');
      expect(JSON.stringify(r.body)).not.toContain(key);
    }
    const unknown = await admin(
      'org',
      'gateway',
      '--org',
      '3f2b8c1e-6d4a-4c2e-9a57-0b1d2e3f4a5b',
      '--provider',
      'sola',
      '--key',
      newKey(),
    );
    expect(unknown.code).toBe(1);
    expect(unknown.json.error.errorCode).toBe('NOT_FOUND');
  });

  it('schedule mode Gateway and a provider that does not run recurrences exclude each other', async () => {
    // Gateway mode first: Sola is refused, and nothing is stored.
    const a = await newOrg();
    expect((await admin('org', 'settings', '--org', a.orgGuid, '--schedule-mode', 'Gateway')).code).toBe(0);
    const refused = await admin(
      'org',
      'gateway',
      '--org',
      a.orgGuid,
      '--provider',
      'sola',
      '--key',
      newKey(),
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: Sola does not run recurrences for us, and this organisation's scheduleMode is Gateway: set it to Internal first/,
    );
    expect(refused.json.error.errorCode).toBe('VALIDATION_FAILED');
    expect((await admin('org', 'show', '--org', a.orgGuid)).json.gateway).toBeNull();

    // Sola first: scheduleMode Gateway is refused with a clear 400; Internal is fine.
    const b = await newOrg();
    await admin('org', 'gateway', '--org', b.orgGuid, '--provider', 'sola', '--key', newKey());
    const gatewayMode = await admin('org', 'settings', '--org', b.orgGuid, '--schedule-mode', 'gateway');
    expect(gatewayMode.code).toBe(1);
    expect(gatewayMode.stderr).toBe(
      'error: scheduleMode Gateway: Sola does not run recurrences for us; use Internal\n',
    );
    const direct = await h.admin('PATCH', `/orgs/${b.orgGuid}/settings`, { scheduleMode: 'Gateway' });
    expect(direct.status).toBe(400);
    expect(direct.body.error.fields).toEqual([
      { field: 'scheduleMode', message: 'Sola does not run recurrences for us; use Internal' },
    ]);
    const internal = await admin('org', 'settings', '--org', b.orgGuid, '--schedule-mode', 'Internal');
    expect(internal.code).toBe(0);
    expect(internal.json.settings.scheduleMode).toBe('Internal');
    // Once the gateway is removed, Gateway mode is allowed again (the sandbox runs recurrences).
    await admin('org', 'gateway', '--org', b.orgGuid, '--provider', 'none');
    expect((await admin('org', 'settings', '--org', b.orgGuid, '--schedule-mode', 'Gateway')).code).toBe(0);
  });

  it('secrets rewrap re-seals every key under the current KEK after a rotation; all or nothing', async () => {
    const orgs = [await newOrg(), await newOrg()];
    const orgKeys = [newKey(), newKey()];
    for (const [i, o] of orgs.entries())
      await admin('org', 'gateway', '--org', o.orgGuid, '--provider', 'sola', '--key', orgKeys[i]!);
    const before = await admin('secrets', 'status');
    expect(before.code).toBe(0);
    const oldId = keyEncryptionKey(oldKek).id;
    const newId = keyEncryptionKey(newKek).id;
    expect(before.json).toMatchObject({
      kekId: oldId,
      previousKekId: null,
      underPrevious: 0,
      underUnknownKey: 0,
    });
    const total = before.json.sealed as number;
    expect(before.json.underCurrent).toBe(total);
    expect(total).toBeGreaterThanOrEqual(2);

    // Restarted with a new KUPAH_MASTER_KEY and the old one as KUPAH_MASTER_KEY_PREVIOUS.
    useRegistry(newKek, oldKek);
    expect((await gatewayOf(orgs[0]!.liveKey))?.cfg.key).toBe(orgKeys[0]);
    expect((await admin('secrets', 'status')).json).toMatchObject({
      kekId: newId,
      previousKekId: oldId,
      sealed: total,
      underCurrent: 0,
      underPrevious: total,
    });
    const rewrap = await admin('secrets', 'rewrap');
    expect(rewrap.code).toBe(0);
    expect(rewrap.json).toEqual({
      kekId: newId,
      rewrapped: total,
      alreadyCurrent: 0,
      sealed: total,
      underCurrent: total,
      underPrevious: 0,
      underUnknownKey: 0,
    });
    expect((await admin('secrets', 'rewrap')).json).toMatchObject({ rewrapped: 0, alreadyCurrent: total });

    // The previous key can go: every key opens under the new one alone.
    useRegistry(newKek);
    for (const [i, o] of orgs.entries()) expect((await gatewayOf(o.liveKey))?.cfg.key).toBe(orgKeys[i]);

    // A server started with an unrelated key changes nothing and says why.
    useRegistry(randomBytes(32));
    const sealedBefore = await h.db.query('SELECT org_id, key_sealed FROM org_gateways ORDER BY org_id');
    const wrong = await admin('secrets', 'rewrap');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(
      new RegExp(
        `^error: ${total} of ${total} sealed values do not open \\(sealed under ${newId};.*nothing was changed\\n$`,
      ),
    );
    expect(await h.db.query('SELECT org_id, key_sealed FROM org_gateways ORDER BY org_id')).toEqual(
      sealedBefore,
    );
    useRegistry(newKek);
  });

  it('a server whose registry holds no KEK refuses to configure gateways (503, one line)', async () => {
    const saved = h.deps.gateways;
    h.deps.gateways = staticGatewayRegistry(sandboxGateway());
    try {
      const o = await admin(
        'org',
        'gateway',
        '--org',
        h.org.orgGuid,
        '--provider',
        'sola',
        '--key',
        newKey(),
      );
      expect(o.code).toBe(1);
      expect(o.stderr).toMatch(/^error: This server has no key-encryption key/);
      expect((await admin('secrets', 'rewrap')).code).toBe(1);
    } finally {
      h.deps.gateways = saved;
    }
  });
});

describe('admin CLI: a production charge goes to the Sola gateway configured with org gateway', () => {
  it('Sola (an emulator) charges production; the sandbox stays the sandbox; none → GATEWAY_NOT_CONFIGURED', async () => {
    const sola = await startSolaEmulator({ key: `sola_${randomBytes(12).toString('hex')}` });
    const h = await createHarness('pglite', {
      gateways: (db) =>
        createGatewayRegistry({ db, sandbox: sandboxGateway(), kek: keyEncryptionKey(randomBytes(32)) }),
    });
    try {
      const url = await h.listenAdmin();
      const admin = async (...argv: string[]) => {
        const k = keyToEnv(argv);
        const o = await cli([...k.argv, '--server', url, '--json'], { ADMIN_TOKEN, ...k.env });
        expect(o.stdout + o.stderr).not.toContain(sola.key);
        return o;
      };
      const { orgGuid, sourceGuid: sandboxSource } = (await admin('org', 'create', '--name', 'Live Org'))
        .json;
      const live = await admin('source', 'create', '--org', orgGuid, '--name', 'Web', '--kind', 'external');
      const charge = (source: string) =>
        h.request('POST', '/v1/External/Charge', chargeBody(h, { orgGUID: orgGuid }), {
          authorization: source,
        });

      const before = await charge(live.json.sourceGuid);
      expect(before.body).toMatchObject({
        paymentStatus: 'Error',
        error: { errorCode: 'GATEWAY_NOT_CONFIGURED' },
      });

      const set = await admin(
        'org',
        'gateway',
        '--org',
        orgGuid,
        '--provider',
        'sola',
        '--key',
        sola.key,
        '--url',
        sola.url,
      );
      expect(set.code).toBe(0);
      const paid = await charge(live.json.sourceGuid);
      expect(paid.status).toBe(200);
      expect(paid.body.paymentStatus).toBe('Success');
      expect(sola.charges()).toHaveLength(1);

      expect((await charge(sandboxSource)).body.paymentStatus).toBe('Success');
      expect(sola.charges()).toHaveLength(1);

      // A sandbox credential can never void a live payment; the live source voids it through Sola.
      const voidWith = (source: string) =>
        h.request(
          'POST',
          '/v1/External/VoidPayment',
          { orgGUID: orgGuid, receiptNum: paid.body.receiptNum },
          {
            authorization: source,
          },
        );
      // 403 since a source may void only its own payments (abuse limits); 409 from the sandbox check.
      const refused = await voidWith(sandboxSource);
      expect([403, 409]).toContain(refused.status);
      expect(refused.body.error.errorCode).toMatch(/^(FORBIDDEN|GATEWAY_NOT_CONFIGURED)$/);
      const voided = await voidWith(live.json.sourceGuid);
      expect(voided.body).toMatchObject({ paymentStatus: 'Voided' });
      expect((await voidWith(live.json.sourceGuid)).body).toMatchObject({ paymentStatus: 'Voided' });

      await admin('org', 'gateway', '--org', orgGuid, '--provider', 'none');
      const after = await charge(live.json.sourceGuid);
      expect(after.body.error.errorCode).toBe('GATEWAY_NOT_CONFIGURED');
      expect(sola.charges()).toHaveLength(1);
    } finally {
      await h.close();
      await sola.close();
    }
  });
});
