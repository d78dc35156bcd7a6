/**
 * The server as a real child process (`node --import tsx src/main.ts`), for tests that start,
 * kill and restart it. Resolves once /readyz answers 200.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';

export const SERVER_DIR = join(import.meta.dirname, '..', '..');

/**
 * The admin listener's port for a server started on `port` (unless the test sets ADMIN_PORT): the
 * next one, so it too stays the same across restarts (restartablePort checks both are free).
 */
export const adminPortFor = (port: number) => port + 1;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  /** The admin listener (admin API, /metrics): ADMIN_PORT, by default adminPortFor(port). */
  adminUrl: string;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Resolves with the exit code; created at spawn, so an early exit is never missed. */
  exited: Promise<number | null>;
  kill(signal: NodeJS.Signals): Promise<number | null>;
}

export async function startServerProcess(port: number, env: NodeJS.ProcessEnv): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: SERVER_DIR,
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      ADMIN_PORT: String(adminPortFor(port)),
      INIT_CWD: SERVER_DIR,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  child.stderr!.on('data', (d) => {
    out += d;
  });
  let gone = false;
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      gone = true;
      r(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  const running: ServerProcess = {
    child,
    url,
    adminUrl: `http://127.0.0.1:${env.ADMIN_PORT ?? adminPortFor(port)}`,
    output: () => out,
    exited,
    async kill(signal) {
      child.kill(signal);
      return exited;
    },
  };
  // A cold start (tsx, migrations) can take half a minute on a loaded machine.
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline && !gone) {
    try {
      // Ready when both listeners answer (ADMIN_PORT=0: the admin address is read from the log,
      // which needs LOG_LEVEL info or lower).
      const logged = /"adminUrl":"http:\/\/[^"]*:(\d+)"/.exec(out)?.[1];
      if (env.ADMIN_PORT === '0' && logged) running.adminUrl = `http://127.0.0.1:${logged}`;
      if (
        (await fetch(`${url}/readyz`)).ok &&
        (env.ADMIN_PORT !== '0' || logged) &&
        (await fetch(`${running.adminUrl}/healthz`)).ok
      ) {
        return running;
      }
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGKILL');
  throw new Error(`the server did not start:\n${out}`);
}

/**
 * A port for a server that tests kill and restart on the same address. Taken below Linux's
 * ephemeral range (32768–60999), so no outgoing connection can be holding it when the server
 * comes back, and checked free now.
 */
export async function restartablePort(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const isFree = (p: number) =>
      new Promise<boolean>((resolve) => {
        const probe = createServer();
        probe.once('error', () => resolve(false));
        probe.listen(p, '127.0.0.1', () => probe.close(() => resolve(true)));
      });
    // The admin listener takes the next port (adminPortFor).
    if ((await isFree(port)) && (await isFree(adminPortFor(port)))) return port;
  }
  throw new Error('no free port between 20000 and 32000');
}

/**
 * A caller of a running server's admin API (JSON in, JSON out) with the given token; `baseUrl` is
 * the admin listener's (ServerProcess.adminUrl).
 */
export function adminClient(baseUrl: () => string, token: string) {
  return async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const r = await fetch(`${baseUrl()}/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return (await r.json()) as T;
  };
}
