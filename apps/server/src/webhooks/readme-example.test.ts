/**
 * The README's signature-verification example, run as printed (with a free port), against a
 * webhook signed the way the dispatcher signs.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newWebhookSecret } from '../admin/admin-service.ts';
import { signHeaders } from './dispatcher.ts';

const readme = readFileSync(join(import.meta.dirname, '..', '..', '..', '..', 'README.md'), 'utf8');
const file = join(import.meta.dirname, `verify-${process.pid}.readme-example.mjs`);

describe("the README's webhook verification example", () => {
  let child: ChildProcess | undefined;
  afterAll(() => {
    child?.kill();
    rmSync(file, { force: true });
  });

  it('accepts our signature, rejects a forged one, and logs the webhook-id', async () => {
    const code = /```js\n([\s\S]*?)```/.exec(readme)?.[1];
    expect(code).toContain('wh.verify(body, req.headers)');
    const port = 40_000 + Math.floor(Math.random() * 10_000);
    writeFileSync(file, code!.replace('.listen(3000)', `.listen(${port})`));
    const secret = newWebhookSecret();
    let out = '';
    child = spawn(process.execPath, [file], {
      env: { ...process.env, KUPAH_WEBHOOK_SECRET: secret },
      stdio: 'pipe',
    });
    child.stdout!.on('data', (d) => {
      out += d;
    });
    let errors = '';
    child.stderr!.on('data', (d) => {
      errors += d;
    });
    const body = JSON.stringify({
      orgGuid: 'g',
      statusDateTime: 't',
      paymentNumber: 'R1',
      paymentStatus: 'Voided',
    });
    // Node starting the example takes well under a second alone, but several seconds while the
    // rest of the suite keeps both cores busy: it is given up to 20 s.
    const send = async (headers: Record<string, string>) => {
      for (let i = 0; i < 200; i++) {
        try {
          return (await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers, body })).status;
        } catch {
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      throw new Error(`example did not start within 20 s${errors ? `: ${errors.slice(0, 500)}` : ''}`);
    };
    expect(await send(signHeaders('msg_readme1', new Date(), body, [secret]))).toBe(204);
    expect(await send(signHeaders('msg_readme2', new Date(), body, [newWebhookSecret()]))).toBe(400);
    expect(await send(signHeaders('msg_readme3', new Date(Date.now() - 3_600_000), body, [secret]))).toBe(
      400,
    );
    await new Promise((r) => setTimeout(r, 100));
    expect(out).toContain('msg_readme1');
    expect(out).not.toContain('msg_readme2');
  });
});
