/**
 * The receipt mailer against a real SMTP server on loopback (smtp-server), the messages parsed
 * with mailparser: content, language, the PDF attachment (its text read back with pdftotext);
 * corrections after a void; bounces; and a server that refuses 30 % of messages and is down for a
 * while: every receipt still arrives exactly once.
 */
import { simpleParser } from 'mailparser';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  chargeBody,
  createHarness,
  type Harness,
  keyAuth,
  sourceAuth,
  testDatabases,
} from '../testing/harness.ts';
import { pdfText } from '../testing/pdf-text.ts';
import { type SmtpReceiver, startSmtpReceiver } from '../testing/smtp-receiver.ts';
import { type ReceiptMailer, receiptMailer } from './mailer.ts';

/** A seeded PRNG (mulberry32): the fault pattern is the same on every run. */
function seeded(seed: number) {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe.each(await testDatabases())('receipt mailer on %s', { timeout: 120_000 }, (kind) => {
  let h: Harness;
  let rx: SmtpReceiver;
  let mailer: ReceiptMailer;
  beforeAll(async () => {
    h = await createHarness(kind);
    h.clock.set('2026-11-23T14:00:00Z');
    rx = await startSmtpReceiver();
    await h.admin('PATCH', `/orgs/${h.org.orgGuid}/settings`, {
      receipts: { legalName: 'Congregation Chesed Inc.', address: '12 Main Street', taxId: '12-3456789' },
      rateLimit: { perSecond: 100_000, burst: 100_000 },
    });
    mailer = receiptMailer(h.deps, {
      smtpUrl: rx.url,
      from: '"Chesed receipts" <receipts@chesed.example>',
      retryMs: 60_000,
      timeoutMs: 3000,
      random: seeded(7),
    });
  });
  afterEach(() => {
    rx.failData = () => null;
    rx.delayMs = () => 0;
  });
  afterAll(async () => {
    await mailer?.stop();
    await rx?.close();
    await h?.close();
  });

  const donor = async (body: Record<string, unknown>) =>
    (
      await h.request(
        'PUT',
        '/V1/External/SaveDonor',
        { orgGuid: h.org.orgGuid, donorID: '', ...body },
        keyAuth(h),
      )
    ).body.donorId as string;
  const charge = async (over: Record<string, unknown>) => {
    const r = await h.request('POST', '/v1/External/Charge', chargeBody(h, over), sourceAuth(h));
    expect(r.body.paymentStatus).toBe('Success');
    return r.body.receiptNum as string;
  };
  const statusOf = async (receiptNum: string) =>
    (await h.request('GET', `/v1/External/Receipts?receiptNum=${receiptNum}`, undefined, keyAuth(h))).body
      .deliveries as { kind: string; status: string; lastError: string | null; attempts: number }[];

  it('sends the receipt in the donor’s language: HTML right to left, plain text, the PDF attached; then the correction', async () => {
    const donorId = await donor({
      firstNameHebrew: 'שרה',
      lastNameHebrew: 'לוי',
      donorEmails: [{ emailAddress: 'sarah@example.org' }],
    });
    const receiptNum = await charge({
      amount: 180,
      donor: { accountNum: donorId },
      campaign: { campaignName: 'בניין' },
      note: 'לרפואה',
    });
    expect(await mailer.drain()).toBe(1);
    expect(rx.received).toHaveLength(1);
    const mail = await simpleParser(rx.received[0]!.raw);
    expect(mail.to && 'text' in mail.to ? mail.to.text : '').toBe('sarah@example.org');
    expect(mail.from?.text).toContain('receipts@chesed.example');
    expect(mail.subject).toBe(`קבלה על תרומה ${receiptNum} — Congregation Chesed Inc.`);
    expect(mail.html).toContain('dir="rtl"');
    expect(mail.html).toContain('lang="he"');
    expect(mail.text).toContain('תורם: שרה לוי');
    expect(mail.text).toContain('סכום: 180.00 $');
    expect(mail.text).toContain('קמפיין: בניין');
    expect(mail.text).toContain('הערה: לרפואה');
    expect(mail.text).toContain('Visa המסתיים ב־4242');
    expect(mail.text).toContain('לא ניתנו טובין או שירותים בתמורה לתרומה זו');
    expect(mail.text).not.toContain('4242424242424242');
    expect(mail.attachments).toHaveLength(1);
    const pdf = mail.attachments[0]!;
    expect(pdf.contentType).toBe('application/pdf');
    expect(pdf.filename).toBe(`receipt-${receiptNum}-he.pdf`);
    const text = pdfText(pdf.content).replace(/\s+/g, ' ');
    expect(text).toContain('שרה לוי');
    expect(text).toContain('180.00');
    expect(text).toContain('קבלה על תרומה');
    const [sent] = await statusOf(receiptNum);
    expect(sent).toMatchObject({ kind: 'receipt', status: 'sent', attempts: 1 });
    const [row] = await h.db.query<{ message_id: string }>(
      `SELECT message_id FROM receipt_deliveries WHERE kind = 'receipt' ORDER BY id DESC LIMIT 1`,
    );
    expect(rx.received[0]!.messageId).toBe(row!.message_id);

    // Nothing is sent twice.
    expect(await mailer.drain()).toBe(0);
    expect(rx.received).toHaveLength(1);

    // A void: the corrected receipt follows, to the same address, in the same language.
    await h.request('POST', '/v1/External/VoidPayment', { orgGUID: h.org.orgGuid, receiptNum }, keyAuth(h));
    expect(await mailer.drain()).toBe(1);
    const correction = await simpleParser(rx.received[1]!.raw);
    expect(correction.subject).toContain('קבלה מתוקנת');
    expect(correction.text).toContain('קבלה מתוקנת: תרומה זו בוטלה');
    expect(rx.received[1]!.to).toEqual(['sarah@example.org']);
  });

  it('an English receipt for an English-named donor; a bounce (550) is final and listed as bounced', async () => {
    const donorId = await donor({
      firstName: 'Moshe',
      lastName: 'Cohen',
      donorEmails: [{ emailAddress: 'moshe@example.org' }],
    });
    const receiptNum = await charge({ amount: 18, donor: { accountNum: donorId } });
    rx.unknownRecipients.add('nobody@example.org');
    const nobody = await donor({
      firstName: 'No',
      lastName: 'Body',
      donorEmails: [{ emailAddress: 'nobody@example.org' }],
    });
    const bounced = await charge({ amount: 5, donor: { accountNum: nobody } });
    const before = rx.received.length;
    await mailer.drain();
    const mail = await simpleParser(rx.received.at(-1)!.raw);
    expect(rx.received.length).toBe(before + 1);
    expect(mail.subject).toBe(`Donation receipt ${receiptNum} — Congregation Chesed Inc.`);
    expect(mail.html).toContain('dir="ltr"');
    expect(mail.text).toContain('Amount: $18.00');
    expect(mail.text).toContain('Donor: Moshe Cohen');
    expect(pdfText(mail.attachments[0]!.content)).toContain('No goods or services were provided');
    expect(await statusOf(bounced)).toMatchObject([{ status: 'bounced', attempts: 1 }]);
    expect((await statusOf(bounced))[0]!.lastError).toContain('550');
    // Visible to the organisation: the failures view.
    const listed = await h.request('GET', '/v1/External/Receipts?status=bounced', undefined, keyAuth(h));
    expect(listed.body.deliveries.map((d: { receiptNum: string }) => d.receiptNum)).toEqual([bounced]);
    // And a bounce is never retried.
    h.clock.set(new Date(h.clock.now.getTime() + 86_400_000).toISOString());
    expect(await mailer.drain()).toBe(0);
  });

  it('a server failing 30 % of the time and down for a while still gets every receipt exactly once', async () => {
    const random = seeded(42);
    rx.failData = () => (random() < 0.3 ? 451 : null);
    const donors = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        donor({
          firstName: `Donor${i}`,
          lastName: 'Test',
          donorEmails: [{ emailAddress: `d${i}@example.org` }],
        }),
      ),
    );
    const receipts: string[] = [];
    for (let i = 0; i < 30; i++)
      receipts.push(await charge({ amount: 10 + i, donor: { accountNum: donors[i % 6] } }));
    const before = new Set(rx.received.map((r) => r.messageId));
    // Rounds: each sends what is due, then the clock moves past any retry's back-off. The server
    // is down for rounds 2–4 (connections refused), then back on the same port.
    let rounds = 0;
    for (; rounds < 40; rounds++) {
      if (rounds === 2) await rx.stop();
      if (rounds === 5) await rx.start();
      await mailer.drain();
      const states = await Promise.all(receipts.map(statusOf));
      if (rounds >= 5 && states.every((s) => s[0]?.status === 'sent')) break;
      h.clock.set(new Date(h.clock.now.getTime() + 7 * 3_600_000).toISOString());
    }
    expect(rounds).toBeLessThan(40);
    const fresh = rx.received.filter((r) => !before.has(r.messageId));
    const ids = fresh.map((r) => r.messageId);
    expect(new Set(ids).size).toBe(ids.length); // exactly once each …
    expect(ids).toHaveLength(30); // … and every one of them
    const rows = await h.db.query<{ message_id: string; attempts: number }>(
      `SELECT r.message_id, r.attempts FROM receipt_deliveries r JOIN payments p ON p.id = r.payment_id
       WHERE p.receipt_num = ANY($1::text[])`,
      [receipts],
    );
    expect(new Set(rows.map((r) => r.message_id))).toEqual(new Set(ids));
    // Some needed retries (the faults did happen), none more than the bound.
    expect(rows.some((r) => r.attempts > 1)).toBe(true);
    expect(Math.max(...rows.map((r) => r.attempts))).toBeLessThanOrEqual(12);
    const metrics = (await h.adminRequest('GET', '/metrics')).body as string;
    expect(metrics).toMatch(/kupah_receipt_emails_total\{outcome="retried"\} [1-9]/);
    expect(metrics).toMatch(/kupah_receipt_emails_total\{outcome="bounced"\} 1/);
  });
});
