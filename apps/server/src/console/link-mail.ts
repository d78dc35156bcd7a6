/**
 * E-mails of the console's one-time links (invitations and password resets) over SMTP (nodemailer,
 * SMTP_URL and RECEIPTS_FROM, the receipts' settings), in English and Hebrew in one message. Sent
 * at once, not queued: the link is also shown to whoever asked (owner or operator), so a failed
 * e-mail loses nothing.
 */
import nodemailer, { type TransportOptions } from 'nodemailer';
import type { LinkMailer } from './users-service.ts';

export interface LinkMailOptions {
  smtpUrl: string;
  from: string;
  timeoutMs?: number;
}

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

/** The subject, text and HTML of a link e-mail (pure). */
export function linkMail(m: Parameters<LinkMailer>[0]): { subject: string; text: string; html: string } {
  const invitation = m.kind === 'invitation';
  const en = invitation
    ? {
        subject: `You are invited to ${m.orgName}'s Kupah console`,
        body: `You have been invited to ${m.orgName}'s console. Open this link to choose your password (it works once, for 7 days):`,
      }
    : {
        subject: `Reset your Kupah console password (${m.orgName})`,
        body: 'Open this link to choose a new password (it works once, for 1 hour). If you did not ask for it, ignore this e-mail:',
      };
  const he = invitation
    ? {
        subject: `הזמנה למסוף קופה של ${m.orgName}`,
        body: `הוזמנת למסוף של ${m.orgName}. פתחו את הקישור כדי לבחור סיסמה (הוא פועל פעם אחת, במשך 7 ימים):`,
      }
    : {
        subject: `איפוס סיסמה למסוף קופה (${m.orgName})`,
        body: 'פתחו את הקישור כדי לבחור סיסמה חדשה (הוא פועל פעם אחת, במשך שעה). אם לא ביקשתם זאת, התעלמו מהודעה זו:',
      };
  const hello = m.name ? `${m.name},` : '';
  const text = [hello, en.body, m.link, '', '—', '', he.body, m.link, '']
    .filter((l, i) => i > 0 || l)
    .join('\n');
  const link = `<p><a href="${escapeHtml(m.link)}">${escapeHtml(m.link)}</a></p>`;
  const html = `<!doctype html><html><body>
<div dir="ltr" lang="en">${hello ? `<p>${escapeHtml(hello)}</p>` : ''}<p>${escapeHtml(en.body)}</p>${link}</div>
<hr>
<div dir="rtl" lang="he" style="text-align:right"><p>${escapeHtml(he.body)}</p>${link}</div>
</body></html>`;
  return { subject: `${en.subject} / ${he.subject}`, text, html };
}

export function consoleLinkMailer(opts: LinkMailOptions): LinkMailer {
  const timeoutMs = opts.timeoutMs ?? 30_000;
  const transport = nodemailer.createTransport({
    url: opts.smtpUrl,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  } as TransportOptions);
  return async (m) => {
    const mail = linkMail(m);
    await transport.sendMail({
      from: opts.from,
      to: m.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      headers: { 'X-Kupah-Console': m.kind },
    });
  };
}
