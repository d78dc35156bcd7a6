/**
 * Starts the real server as users do (`node --import tsx apps/server/src/main.ts`) on a free
 * loopback port, waits for /readyz, and stops it (SIGTERM, then SIGKILL) when asked.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import { errorText, sleep } from './lifecycle.ts';

export const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));
export const HOST = '127.0.0.1';

export interface ServerHandle {
  url: string;
  /** The admin listener (admin API, /metrics): ADMIN_PORT on loopback. */
  adminUrl: string;
  pid: number | undefined;
  /** The last few KiB of the server's log (stderr and JSON log lines), for error messages. */
  logTail(): string;
  /** SIGTERM, wait for the graceful shutdown, SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface ServerOptions {
  /** Variables set on top of the inherited environment. `undefined` removes one. */
  env: Record<string, string | undefined>;
  readyTimeoutMs?: number;
  /** Write a V8 CPU profile of the server into this directory (node --cpu-prof). */
  cpuProfDir?: string | undefined;
}

/** A port the kernel has just handed out on the loopback interface. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, HOST, () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no free port'))));
    });
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', onExit);
      resolve(false);
    }, ms);
    const onExit = () => {
      clearTimeout(timer);
      resolve(true);
    };
    child.once('exit', onExit);
  });
}

export async function startServer(opts: ServerOptions): Promise<ServerHandle> {
  const port = await freePort();
  const adminPort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries({
    ...opts.env,
    PORT: String(port),
    HOST,
    ADMIN_PORT: String(adminPort),
    ADMIN_HOST: HOST,
  })) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const prof = opts.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${opts.cpuProfDir}`] : [];
  const child = spawn(process.execPath, [...prof, '--import', 'tsx', 'apps/server/src/main.ts'], {
    cwd: REPO_ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let tail = '';
  const keep = (text: string) => {
    tail = (tail + text).slice(-4096);
  };
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', keep);
  // stdout carries pino's JSON log lines (kept) and, on a first PGlite start, demo credentials
  // (plain text lines, never kept or shown).
  let partial = '';
  child.stdout?.setEncoding('utf8');
  child.stdout?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!.slice(-65_536);
    for (const line of lines) if (line.startsWith('{')) keep(`${line}\n`);
  });
  let spawnError: Error | null = null;
  child.on('error', (err) => {
    spawnError = err;
  });

  const url = `http://${HOST}:${port}`;
  const handle: ServerHandle = {
    url,
    adminUrl: `http://${HOST}:${adminPort}`,
    pid: child.pid,
    logTail: () => tail.trim(),
    async stop(graceMs = 15_000) {
      if (exited(child) || child.pid === undefined) return;
      child.kill('SIGTERM');
      if (await waitExit(child, graceMs)) return;
      child.kill('SIGKILL');
      await waitExit(child, 5_000);
    },
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 60_000);
  let last = 'no answer yet';
  while (Date.now() < deadline) {
    if (spawnError) throw new Error(`could not start the server: ${errorText(spawnError)}`);
    if (exited(child)) {
      throw new Error(
        `the server exited (code ${child.exitCode ?? child.signalCode}) before it was ready:\n${tail}`,
      );
    }
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      await res.arrayBuffer();
      if (res.status === 200) return handle;
      last = `GET /readyz answered ${res.status}`;
    } catch (err) {
      last = errorText(err);
    }
    await sleep(100);
  }
  await handle.stop(5_000);
  throw new Error(`the server was not ready within ${opts.readyTimeoutMs ?? 60_000} ms (${last}):\n${tail}`);
}

export interface JsonResponse<T> {
  status: number;
  body: T;
}

/** One JSON request with a deadline. */
export async function requestJson<T>(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; timeoutMs?: number } = {},
): Promise<JsonResponse<T>> {
  const res = await fetch(url, {
    method: init.method ?? 'GET',
    headers: { 'content-type': 'application/json', ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(init.timeoutMs ?? 10_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: res.status, body: body as T };
}

/** Sum of the samples of one Prometheus metric whose labels contain every `label="value"` given. */
export async function metricSum(
  url: string,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics answered ${res.status}`);
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const brace = line.indexOf('}');
    const labelText = brace > 0 ? line.slice(name.length + 1, brace) : '';
    if (!wanted.every((w) => labelText.split(',').includes(w))) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) sum += value;
  }
  return sum;
}

/**
 * An organisation with limits out of a benchmark's way (rate limit, offline limits) and a sandbox
 * device waiting to be paired; returns the device's pairing code.
 */
export async function benchDevice(serverUrl: string, adminToken: string, name: string): Promise<string> {
  const admin = async <T>(method: string, path: string, body?: unknown) => {
    const r = await requestJson<T>(`${serverUrl}/admin${path}`, {
      method,
      body,
      headers: { authorization: `Bearer ${adminToken}` },
    });
    if (r.status >= 300) throw new Error(`admin ${method} ${path} answered ${r.status}`);
    return r.body;
  };
  const org = await admin<{ orgGuid: string }>('POST', '/orgs', { name });
  await admin('PATCH', `/orgs/${org.orgGuid}/settings`, {
    rateLimit: { perSecond: 100_000, burst: 100_000 },
    offline: { perPaymentMinor: 1_000_000, totalMinor: 1_000_000_000, expiryHours: 72 },
  });
  const device = await admin<{ pairingCode: string }>('POST', `/orgs/${org.orgGuid}/devices`, {
    name,
    sandbox: true,
  });
  return device.pairingCode;
}

/**
 * The code the server ran: the commit, with `+changes` when apps/ or packages/ differ from it
 * (other work in progress); null outside a git checkout.
 */
export function serverRevision(): string | null {
  try {
    const git = (...args: string[]) =>
      execFileSync('git', args, { cwd: REPO_ROOT, encoding: 'utf8', timeout: 10_000 }).trim();
    const commit = git('rev-parse', '--short=12', 'HEAD');
    const dirty = git('status', '--porcelain', '--', 'apps', 'packages') !== '';
    return `${commit}${dirty ? '+changes' : ''}`;
  } catch {
    return null;
  }
}
