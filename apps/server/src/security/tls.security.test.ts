/**
 * HTTPS served by the server itself (TLS_CERT_FILE / TLS_KEY_FILE): someone on the network path
 * sees nothing in clear, a plain-HTTP client gets nothing, and browsers are told to stay on HTTPS.
 * The certificate is made at test time with openssl (a throwaway CA-less self-signed one).
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.ts';
import { restartablePort, SERVER_DIR } from '../testing/server-process.ts';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(url: string, opts: { ca?: Buffer; token?: string } = {}): Promise<Answer> {
  const u = new URL(url);
  const request = u.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(
      u,
      {
        method: 'GET',
        timeout: 10_000,
        ...(opts.ca ? { ca: opts.ca } : {}),
        headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {},
      },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => {
          body += d;
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}

describe('the server speaks HTTPS itself with TLS_CERT_FILE and TLS_KEY_FILE (a real process)', {
  timeout: 120_000,
}, () => {
  const dir = mkdtempSync(join(tmpdir(), 'kupah-tls-'));
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  const token = `adm_${'t'.repeat(40)}`;
  let child: ChildProcess | undefined;
  let exited: Promise<number | null> | undefined;
  let out = '';
  let port = 0;
  let adminPort = 0;
  let ca: Buffer;

  beforeAll(async () => {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        key,
        '-out',
        cert,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore' },
    );
    ca = readFileSync(cert);
    port = await restartablePort();
    adminPort = port + 1;
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      cwd: SERVER_DIR,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        ADMIN_PORT: String(adminPort),
        ADMIN_TLS: '1',
        TLS_CERT_FILE: cert,
        TLS_KEY_FILE: key,
        ADMIN_TOKEN: token,
        DATA_DIR: join(dir, 'data'),
        DATABASE_URL: '',
        LOG_LEVEL: 'info',
        INIT_CWD: SERVER_DIR,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => {
      out += d;
    });
    child.stderr!.on('data', (d) => {
      out += d;
    });
    exited = new Promise((r) => child!.once('exit', (code) => r(code)));
    const deadline = Date.now() + 100_000;
    while (Date.now() < deadline && child.exitCode === null) {
      if (
        out.includes('"msg":"listening on https://') &&
        out.includes('"msg":"admin API listening on https://')
      )
        return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`the server did not start:\n${out}`);
  }, 120_000);

  afterAll(async () => {
    if (child && child.exitCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  it('HTTPS with the certificate succeeds, with Strict-Transport-Security; it logs https addresses', async () => {
    const r = await get(`https://127.0.0.1:${port}/readyz`, { ca });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body)).toMatchObject({ status: 'ready' });
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000');
    expect(out).toContain(`listening on https://127.0.0.1:${port}`);
  });

  it('plain HTTP to the HTTPS port gets no answer', async () => {
    await expect(get(`http://127.0.0.1:${port}/readyz`)).rejects.toThrow();
  });

  it('a client that does not trust the certificate is refused by its own TLS check (the server really presents it)', async () => {
    await expect(get(`https://127.0.0.1:${port}/readyz`)).rejects.toThrow(/self[- ]signed|certificate/i);
  });

  it('ADMIN_TLS=1: the admin listener is HTTPS too; plain HTTP to it gets nothing', async () => {
    const r = await get(`https://127.0.0.1:${adminPort}/admin/orgs/00000000-0000-4000-8000-000000000000`, {
      ca,
      token,
    });
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body).error.errorCode).toBe('NOT_FOUND');
    expect(r.headers['strict-transport-security']).toBe('max-age=31536000');
    await expect(get(`http://127.0.0.1:${adminPort}/metrics`)).rejects.toThrow();
  });
});

describe('TLS configuration', () => {
  it('a certificate without its key (or the reverse) is refused', () => {
    expect(() => loadConfig({ TLS_CERT_FILE: '/x/cert.pem' })).toThrow(
      /TLS_CERT_FILE and TLS_KEY_FILE: give both or neither/,
    );
    expect(() => loadConfig({ TLS_KEY_FILE: '/x/key.pem' })).toThrow(/give both or neither/);
    expect(() => loadConfig({ ADMIN_TLS: '1' })).toThrow(/ADMIN_TLS=1 needs TLS_CERT_FILE/);
  });
});
