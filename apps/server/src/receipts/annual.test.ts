/**
 * Receipts through the admin CLI: the organisation's legal details and a tax statement template
 * file (`org settings`), year-end statements for every donor of a year generated and e-mailed once
 * (`receipts annual --send`), and the failures view (`receipts list --status`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simpleParser } from 'mailparser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../cli/admin-cli.ts';
import {
  ADMIN_TOKEN,
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
} from '../testing/harness.ts';
import { pdfText } from '../testing/pdf-text.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../testing/smtp-receiver.ts';
import { receiptMailer } from './mailer.ts';

// biome-ignore lint/suspicious/noExplicitAny: CLI answers are read field by field.
async function cli(argv: string[]): Promise<{ code: number; json: any; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await run(argv, {
    stdout: (s) => {
      stdout += s;
    },
    stderr: (s) => {
      stderr += s;
    },
    env: { ADMIN_TOKEN },
  });
  let json: unknown;
  try {
    json = JSON.parse(stdout);
  } catch {}
  return { code, json, stderr };
}

describe('receipts through the admin CLI (PGlite)', { timeout: 60_000 }, () => {
  let h: Harness;
  let rx: SmtpReceiver;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'kupah-annual-'));
  beforeAll(async () => {
    h = await createHarness('pglite');
    h.clock.set('2026-12-30T14:00:00Z');
    url = await h.listenAdmin();
    rx = await startSmtpReceiver();
  });
  afterAll(async () => {
    await rx?.close();
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const admin = (...argv: string[]) => cli([...argv, '--server', url, '--json']);

  it('org settings: legal name, address, tax id, a template file, on/off', async () => {
    const template = join(dir, 'he.txt');
    writeFileSync(template, 'תודה! {legalName} — מספר אישור {taxId}.\n');
    const o = await admin(
      'org',
      'settings',
      '--org',
      h.org.orgGuid,
      '--legal-name',
      'Chesed Fund Inc.',
      '--address',
      '1 Main St\\nBrooklyn NY',
      '--tax-id',
      '98-7654321',
      '--receipt-template-he',
      template,
    );
    expect(o.code, o.stderr).toBe(0);
    expect(o.json.settings.receipts).toEqual({
      legalName: 'Chesed Fund Inc.',
      address: '1 Main St\nBrooklyn NY',
      taxId: '98-7654321',
      statementHe: 'תודה! {legalName} — מספר אישור {taxId}.',
    });
    const off = await admin('org', 'settings', '--org', h.org.orgGuid, '--receipts', 'false');
    expect(off.json.settings.receipts.enabled).toBe(false);
    const on = await admin('org', 'settings', '--org', h.org.orgGuid, '--receipts', 'true');
    expect(on.json.settings.receipts.enabled).toBe(true);
    expect((await admin('org', 'settings', '--org', h.org.orgGuid, '--receipts', 'maybe')).code).not.toBe(0);
  });

  it('receipts annual: a statement per donor of the year, e-mailed once with --send', async () => {
    const donor = async (body: Record<string, unknown>) =>
      (
        await h.request(
          'PUT',
          '/V1/External/SaveDonor',
          { orgGuid: h.org.orgGuid, donorID: '', ...body },
          keyAuth(h),
        )
      ).body.donorId as string;
    const sarah = await donor({
      firstNameHebrew: 'שרה',
      lastNameHebrew: 'לוי',
      donorEmails: [{ emailAddress: 'sarah@example.org' }],
    });
    const moshe = await donor({ firstName: 'Moshe', lastName: 'Cohen' });
    for (const [accountNum, amount, currency] of [
      [sarah, 18, 'USD'],
      [sarah, 36, 'USD'],
      [sarah, 250, 'ILS'],
      [moshe, 100, 'USD'],
    ] as const) {
      const r = await h.request(
        'POST',
        '/v1/External/Charge',
        chargeBody(h, { amount, currency, donor: { accountNum } }),
        sourceAuth(h),
      );
      expect(r.body.paymentStatus).toBe('Success');
    }
    const dry = await admin('receipts', 'annual', '--org', h.org.orgGuid, '--year', '2026');
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.json).toMatchObject({ year: 2026, donors: 2, gifts: 4, queued: 0, withoutEmail: [moshe] });
    expect(dry.json.bytes).toBeGreaterThan(1000);
    const sent = await admin('receipts', 'annual', '--org', h.org.orgGuid, '--year', '2026', '--send');
    expect(sent.json).toMatchObject({ donors: 2, queued: 1, alreadyQueued: 0, withoutEmail: [moshe] });
    const again = await admin('receipts', 'annual', '--org', h.org.orgGuid, '--year', '2026', '--send');
    expect(again.json).toMatchObject({ queued: 0, alreadyQueued: 1 });

    const mailer = receiptMailer(h.deps, { smtpUrl: rx.url, from: 'receipts@chesed.example' });
    try {
      // Sarah's three receipts and her statement.
      expect(await mailer.drain()).toBe(4);
    } finally {
      await mailer.stop();
    }
    const statements = rx.received.filter((r) => /^X-Kupah-Receipt: annual/im.test(r.raw.toString()));
    expect(statements).toHaveLength(1);
    const mail = await simpleParser(statements[0]!.raw);
    expect(mail.subject).toBe('ריכוז תרומות לשנת 2026 — Chesed Fund Inc.');
    const text = pdfText(mail.attachments[0]!.content).replace(/\s+/g, ' ');
    expect(text).toContain('ריכוז תרומות לשנת 2026');
    expect(text).toContain('שרה לוי');
    expect(text).toContain('54.00');
    expect(text).toContain('250.00');
    expect(text).toContain('מספר אישור');

    const list = await admin('receipts', 'list', '--org', h.org.orgGuid, '--status', 'sent');
    expect(list.json.deliveries.map((d: { kind: string }) => d.kind).sort()).toEqual([
      'annual',
      'receipt',
      'receipt',
      'receipt',
    ]);
    expect(
      (await admin('receipts', 'list', '--org', h.org.orgGuid, '--status', 'failed')).json.deliveries,
    ).toEqual([]);
  });
});
