/**
 * A webhook receiver on loopback for tests: verifies every request's signature with the
 * `standardwebhooks` library and records what arrived. `respond` decides each answer.
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  webhookId: string;
  path: string;
  body: string;
  headers: Record<string, string>;
  verified: boolean;
  status: number;
}

export type Responder = (
  r: Omit<Received, 'status'>,
  n: number,
) => number | { status: number; headers?: Record<string, string>; hangMs?: number; body?: string };

export interface Receiver {
  url: string;
  received: Received[];
  /** Secrets tried in order when verifying. */
  secrets: string[];
  respond: Responder;
  /** Webhook ids answered 2xx, with how many times each. */
  accepted(): Map<string, number>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    let s = '';
    req.setEncoding('utf8');
    req.on('data', (c) => {
      s += c;
    });
    req.on('end', () => resolve(s));
  });
}

export async function startReceiver(): Promise<Receiver> {
  const receiver: Receiver = {
    url: '',
    received: [],
    secrets: [],
    respond: () => 200,
    accepted() {
      const m = new Map<string, number>();
      for (const r of receiver.received)
        if (r.status >= 200 && r.status < 300) m.set(r.webhookId, (m.get(r.webhookId) ?? 0) + 1);
      return m;
    },
    close: async () => {},
  };
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
    let verified = false;
    for (const secret of receiver.secrets) {
      try {
        new Webhook(secret).verify(body, headers);
        verified = true;
        break;
      } catch {}
    }
    const base = { webhookId: headers['webhook-id'] ?? '', path: req.url ?? '', body, headers, verified };
    const answer = receiver.respond(base, receiver.received.length);
    const a = typeof answer === 'number' ? { status: answer } : answer;
    receiver.received.push({ ...base, status: a.status });
    if (a.hangMs) await new Promise((r) => setTimeout(r, a.hangMs));
    if (res.destroyed) return;
    res.writeHead(a.status, a.headers ?? {});
    res.end(a.body ?? '');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  receiver.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return receiver;
}
