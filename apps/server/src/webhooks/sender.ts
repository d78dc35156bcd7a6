/**
 * One webhook attempt over HTTPS (plain HTTP only with WEBHOOK_ALLOW_PRIVATE=1): no redirects
 * followed, a 15 s limit for the whole exchange, at most 64 KiB of the response read, and the SSRF
 * guard on every address dialled.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { isPublicAddress } from './address-guard.ts';

export interface SendOptions {
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
}

export interface SendResult {
  statusCode: number | null;
  error: string | null;
  latencyMs: number;
  retryAfter: string | undefined;
}

const agents = {
  http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
  https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

class BlockedAddress extends Error {}

function guardedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0);
      const list = addresses as LookupAddress[];
      const bad = list.find((a) => !allowPrivate && !isPublicAddress(a.address));
      if (bad)
        return callback(
          new BlockedAddress(`${hostname} resolves to a non-public address (${bad.address})`),
          '',
          0,
        );
      if ((options as { all?: boolean }).all)
        return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      const first = list[0]!;
      return callback(null, first.address, first.family);
    });
  };
}

/**
 * Why this webhook URL may not be used (null: it may): anything but `https://` is refused unless
 * WEBHOOK_ALLOW_PRIVATE=1 (development and tests, where receivers are local `http://` servers).
 */
export function insecureWebhookUrl(url: string | URL, allowPrivate: boolean): string | null {
  let target: URL;
  try {
    target = typeof url === 'string' ? new URL(url) : url;
  } catch {
    return 'invalid URL';
  }
  if (target.protocol === 'https:') return null;
  if (target.protocol === 'http:' && allowPrivate) return null;
  return 'blocked: webhook URLs must be https:// (http:// only with WEBHOOK_ALLOW_PRIVATE=1, for development)';
}

export async function sendWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: SendOptions,
): Promise<SendResult> {
  const started = performance.now();
  const done = (statusCode: number | null, error: string | null, retryAfter?: string): SendResult => ({
    statusCode,
    error,
    latencyMs: Math.round(performance.now() - started),
    retryAfter,
  });
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return done(null, 'invalid URL');
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return done(null, 'only http(s) URLs');
  // Payloads carry donor data and gateway tokens: never over plain HTTP, except in development.
  const insecure = insecureWebhookUrl(target, opts.allowPrivate);
  if (insecure) return done(null, insecure);
  const host = target.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) && !opts.allowPrivate && !isPublicAddress(host)) {
    return done(null, `blocked: ${host} is not a public address`);
  }
  const mod = target.protocol === 'https:' ? https : http;
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    const finish = (r: SendResult) => {
      if (!settled) {
        settled = true;
        clearTimeout(timer);
        resolve(r);
      }
    };
    const req = mod.request(
      target,
      {
        method: 'POST',
        agent: target.protocol === 'https:' ? agents.https : agents.http,
        lookup: guardedLookup(opts.allowPrivate),
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (res) => {
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          if (read > opts.maxResponseBytes) res.destroy();
        });
        const end = () => finish(done(res.statusCode ?? null, null, res.headers['retry-after']));
        res.on('end', end);
        res.on('close', end);
        res.on('error', end);
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${opts.timeoutMs / 1000} s`));
    }, opts.timeoutMs);
    req.on('error', (err) =>
      finish(
        done(null, err instanceof BlockedAddress ? `blocked: ${err.message}` : err.message || String(err)),
      ),
    );
    req.end(body);
  });
}
