/**
 * The one-time link e-mail over real SMTP (a loopback smtp-server), and an invitation made in the
 * console with the mailer configured: the link reaches the invitee, in English and Hebrew.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../app.ts';
import { consoleSignIn } from '../testing/console-session.ts';
import { createHarness, type Harness } from '../testing/harness.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../testing/smtp-receiver.ts';
import { consoleLinkMailer, linkMail } from './link-mail.ts';

describe('console link e-mails', () => {
  let h: Harness;
  let smtp: SmtpReceiver;
  beforeAll(async () => {
    h = await createHarness('pglite');
    smtp = await startSmtpReceiver();
  });
  afterAll(async () => {
    await smtp?.close();
    await h?.close();
  });

  it('an invitation and a reset read in English and Hebrew, and carry the link', () => {
    const inv = linkMail({
      to: 'a@example.org',
      kind: 'invitation',
      link: 'https://x.example/console/#/link/abc',
      orgName: 'Beth <Israel>',
      name: 'Ada',
    });
    expect(inv.subject).toContain("You are invited to Beth <Israel>'s Kupah console");
    expect(inv.subject).toContain('הזמנה');
    expect(inv.text.match(/https:\/\/x\.example\/console\/#\/link\/abc/g)).toHaveLength(2);
    expect(inv.html).toContain('dir="rtl"');
    expect(inv.html).toContain('Beth &lt;Israel&gt;');
    expect(inv.html).not.toContain('Beth <Israel>');
    const reset = linkMail({ to: 'a@example.org', kind: 'reset', link: 'L', orgName: 'O', name: null });
    expect(reset.subject).toMatch(/^Reset your Kupah console password/);
    expect(reset.text).toContain('1 hour');
    expect(reset.subject).toContain('איפוס סיסמה');
    expect(reset.text).toContain('סיסמה חדשה');
  });

  it('an owner invites with SMTP configured: the invitee receives the same link the owner is shown', async () => {
    const app = createApp(h.deps, {
      console: {
        publicUrl: 'https://donate.example.org',
        mailer: consoleLinkMailer({ smtpUrl: smtp.url, from: 'Kupah <console@example.org>' }),
      },
    });
    const owner = await consoleSignIn(h, { role: 'owner' });
    const res = await app.request('/console/api/users', {
      method: 'POST',
      headers: { cookie: owner.cookie, 'x-csrf-token': owner.csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'invitee@example.org', role: 'viewer' }),
    });
    expect(res.status).toBe(201);
    const { link } = (await res.json()) as { link: string };
    expect(link).toMatch(/^https:\/\/donate\.example\.org\/console\/#\/link\/[\w-]{43}$/);
    expect(smtp.received).toHaveLength(1);
    expect(smtp.received[0]!.to).toEqual(['invitee@example.org']);
    const raw = smtp.received[0]!.raw.toString('utf8').replace(/=\r?\n/g, '');
    expect(raw).toContain(link.split('#')[1]!);
    expect(raw).toMatch(/X-Kupah-Console: invitation/);
  });
});
