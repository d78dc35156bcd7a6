/**
 * A real SMTP server on loopback (`smtp-server`) for receipt tests: it keeps every message it
 * accepted (raw), can refuse some (4xx, at random), refuse recipients for good (5xx), answer slowly,
 * and be stopped and started again on the same port ("down for a while").
 */
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Received {
  messageId: string;
  to: string[];
  raw: Buffer;
}

export interface SmtpReceiver {
  url: string;
  port: number;
  received: Received[];
  /** Called for each message's data: a 4xx code refuses it for now. */
  failData: () => number | null;
  /** Recipients refused for good (550). */
  unknownRecipients: Set<string>;
  /** Delay before each message's answer. */
  delayMs: () => number;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

const messageIdOf = (raw: Buffer): string =>
  /^Message-ID:\s*(<[^>]+>)/im.exec(raw.toString('utf8'))?.[1] ?? '';

export async function startSmtpReceiver(port = 0): Promise<SmtpReceiver> {
  const rx: SmtpReceiver = {
    url: '',
    port,
    received: [],
    failData: () => null,
    unknownRecipients: new Set(),
    delayMs: () => 0,
    stop,
    start,
    close: stop,
  };
  let server: SMTPServer | null = null;

  function make(): SMTPServer {
    return new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS', 'AUTH'],
      logger: false,
      closeTimeout: 50,
      onRcptTo(address, _session, callback) {
        if (rx.unknownRecipients.has(address.address.toLowerCase())) {
          const err = Object.assign(new Error('5.1.1 No such mailbox'), { responseCode: 550 });
          callback(err);
          return;
        }
        callback();
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('end', () => {
          const raw = Buffer.concat(chunks);
          setTimeout(() => {
            const code = rx.failData();
            if (code !== null) {
              callback(Object.assign(new Error('4.3.0 Try again later'), { responseCode: code }));
              return;
            }
            rx.received.push({
              messageId: messageIdOf(raw),
              to: session.envelope.rcptTo.map((r) => r.address),
              raw,
            });
            callback(null);
          }, rx.delayMs());
        });
      },
    });
  }

  async function start(): Promise<void> {
    server = make();
    const s = server;
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(rx.port, '127.0.0.1', () => resolve());
    });
    const address = (s as unknown as { server: { address(): AddressInfo } }).server.address();
    rx.port = address.port;
    rx.url = `smtp://127.0.0.1:${rx.port}`;
  }

  async function stop(): Promise<void> {
    const s = server;
    server = null;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  await start();
  return rx;
}
