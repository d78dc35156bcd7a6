/**
 * The outcome: while the server is asked (up to a few seconds) "sending"; then a receipt number
 * (print or e-mail it), a decline, "saved on this device" with the local reference, or "being
 * confirmed with the card processor" (the server does not know yet whether the card was
 * charged: do not charge again) — which turns into the outcome here when it arrives.
 */
import type { DeviceSettings } from '@kupah/contracts';
import type { OutboxItem } from '@kupah/terminal-core';
import { isBeingConfirmed } from '@kupah/terminal-core';
import type { TFunction } from 'i18next';
import { type FormEvent, type ReactNode, useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { printLines } from '../components/print.ts';
import { NO_NAMES, type ReceiptNames, useReceiptNames } from '../components/receipt-names.ts';
import { dateTime, money } from '../format/format.ts';
import { methodName } from '../format/method-name.ts';
import { errorText } from '../i18n/server-errors.ts';
import { type Draft, useTerminal } from '../store/terminal-store.ts';
import { campaignLabel, reasonLabel } from './details-screen.tsx';
import { personName } from './donor-screen.tsx';

/** What the entry asked for, as stored with the outbox item (no card or bank details). */
interface ReceiptRequestFacts {
  campaign?: { campaignNum: number } | null;
  reason?: { reasonNum: number } | null;
  reasons?: { reasonNum: number; reasonAmount: number }[] | null;
  note?: string | null;
  scheduleDetails?: {
    startDate?: string;
    totalPaymentsCount?: number;
    amountPerPayment?: number;
  } | null;
}

/**
 * The receipt as text lines in the current language, printed with the same content as the e-mailed
 * one: the organisation's legal name, address and tax id, the receipt number, date, amount, method
 * (brand and last 4 only), campaign, reason or split, note, donor, a schedule's terms, and the tax
 * statement in this language (from the organisation's settings, kept on the device).
 */
export function receiptLines(
  item: OutboxItem,
  draft: Draft,
  settings: DeviceSettings,
  t: TFunction,
  lang: string,
  names: ReceiptNames = NO_NAMES,
): string[] {
  const legal = settings.receipts;
  const amount = item.currency ? money(item.amountMinor, item.currency, lang) : '';
  const major = (value: number) => (item.currency ? money(Math.round(value * 100), item.currency, lang) : '');
  const method = item.method ? methodName(t, item.method, settings) : '';
  const card = item.display.last4
    ? ` ${item.display.brand ?? ''} •••• ${item.display.last4}`.replace('  ', ' ')
    : '';
  const d = draft.donor;
  const donor =
    d.mode === 'existing' && d.existing
      ? personName(d.existing, lang)
      : d.mode === 'anonymous'
        ? t('donor.anonymous')
        : (item.display.donorName ?? '');
  const request = item.request as ReceiptRequestFacts;
  const campaignNum = request.campaign?.campaignNum;
  const campaign = campaignNum === undefined ? null : names.campaigns.get(campaignNum);
  const reasonName = (reasonNum: number) => {
    const r = names.reasons.get(reasonNum);
    return r ? reasonLabel(r, lang) : String(reasonNum);
  };
  const lines = [legal?.legalName || settings.orgName];
  if (legal?.address) lines.push(legal.address);
  if (legal?.taxId) lines.push(t('receipt.taxId', { id: legal.taxId }));
  lines.push(
    '',
    item.receiptNum
      ? t('receipt.number', { receipt: item.receiptNum })
      : t('receipt.reference', { ref: item.localRef }),
    t('receipt.date', { date: dateTime(item.createdAt, lang) }),
    t('receipt.amount', { amount }),
    t('receipt.method', { method: `${method}${card}` }),
  );
  if (donor) lines.push(t('receipt.donor', { name: donor }));
  if (campaignNum !== undefined && campaignNum !== null)
    lines.push(t('receipt.campaign', { name: campaign ? campaignLabel(campaign) : String(campaignNum) }));
  if (request.reasons && request.reasons.length > 0) {
    for (const part of request.reasons)
      lines.push(
        t('receipt.splitPart', { name: reasonName(part.reasonNum), amount: major(part.reasonAmount) }),
      );
  } else if (request.reason) lines.push(t('receipt.reason', { name: reasonName(request.reason.reasonNum) }));
  if (request.note) lines.push(t('receipt.note', { note: request.note }));
  if (item.display.frequency)
    lines.push(t('receipt.frequency', { frequency: t(`frequency.${item.display.frequency}`) }));
  const terms = request.scheduleDetails;
  if (terms?.totalPaymentsCount && terms.amountPerPayment !== undefined)
    lines.push(
      t('receipt.terms', {
        count: terms.totalPaymentsCount,
        each: major(terms.amountPerPayment),
        total: amount,
        start: terms.startDate ?? '',
      }),
    );
  if (item.scheduleNum) lines.push(t('receipt.schedule', { schedule: item.scheduleNum }));
  const statement = legal?.statement[lang === 'he' ? 'he' : 'en'];
  if (statement) lines.push('', statement);
  lines.push('', t('receipt.thanks'));
  return lines;
}

export function ResultScreen({ onDone }: { onDone?: () => void }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { bridge, data } = useServices();
  const result = useTerminal((s) => s.result);
  const waiting = useTerminal((s) => s.waiting);
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  const setResult = useTerminal((s) => s.setResult);
  const [printNote, setPrintNote] = useState<string | null>(null);
  const names = useReceiptNames();
  const done = onDone ?? useTerminal.getState().startOver;
  const confirmingId = result && !waiting && isBeingConfirmed(result) ? result.id : null;

  // Being confirmed: the sync loop keeps asking; show the outcome here as soon as it is known.
  const showConfirmed = useCallback(
    (item: OutboxItem) => {
      const settled = item.state !== 'queued' && item.state !== 'sending';
      if (settled && useTerminal.getState().result?.id === item.id) setResult(item, false);
    },
    [setResult],
  );
  useWatchedItem(confirmingId, showConfirmed);

  // The outcome is on screen, with the donor there: a decline seen now needs no later alarm.
  const seenId =
    result && !waiting && ['done', 'declined', 'error'].includes(result.state) ? result.id : null;
  useEffect(() => {
    if (seenId) void data.markOutcomeSeen(seenId).catch(() => undefined);
  }, [seenId, data]);

  if (!result || !settings) return null;
  const amount = result.currency ? money(result.amountMinor, result.currency, lang) : '';
  const lines = receiptLines(result, draft, settings, t, lang, names);
  // Only an address typed here: a known donor's addresses reach the device masked (d•••@x.org).
  const email = draft.donor.mode === 'new' ? draft.donor.email.trim() : '';
  // A receipt by e-mail for money taken or about to be (offline: it goes once the donation is
  // forwarded), when the organisation's server sends receipts.
  const canEmail =
    !waiting && settings.receipts?.enabled === true && ['done', 'queued', 'sending'].includes(result.state);

  async function print() {
    setPrintNote(null);
    const title = t('receipt.title', { org: settings?.orgName ?? '' });
    setPrintNote((await printLines(bridge, t, lang, title, lines)).note);
  }

  let heading: ReactNode;
  if (waiting) {
    heading = (
      <h1 tabIndex={-1} data-testid="result-waiting">
        {t('result.waiting')}
      </h1>
    );
  } else if (result.state === 'done') {
    heading = (
      <h1 tabIndex={-1} className="approved" data-testid="result-approved">
        {t('result.approved', { receipt: result.receiptNum })}
        {result.scheduleNum ? <span> · {t('result.schedule', { schedule: result.scheduleNum })}</span> : null}
      </h1>
    );
  } else if (result.state === 'declined') {
    heading = (
      <h1 tabIndex={-1} className="declined" data-testid="result-declined">
        {t('result.declined', { message: errorText(t, result.error) })}
      </h1>
    );
  } else if (result.state === 'error' || result.state === 'expired' || result.state === 'discarded') {
    heading = (
      <h1 tabIndex={-1} className="declined" data-testid="result-error">
        {t('result.error', { message: errorText(t, result.error) })}
      </h1>
    );
  } else if (isBeingConfirmed(result)) {
    heading = (
      <h1 tabIndex={-1} className="confirming" data-testid="result-confirming">
        {t('result.confirming')}
      </h1>
    );
  } else {
    heading = (
      <h1 tabIndex={-1} data-testid="result-saved">
        {t('result.saved', { ref: result.localRef })}
      </h1>
    );
  }

  return (
    <section className="screen" data-testid="result-screen" aria-live="polite" aria-busy={waiting}>
      {heading}
      {waiting ? <progress aria-label={t('result.waiting')} /> : null}
      <p className="amount-display">{amount}</p>
      {!waiting && result.state !== 'done' && result.state !== 'declined' ? (
        <p className="muted" data-testid="result-ref">
          {t('result.reference', { ref: result.localRef })}
        </p>
      ) : null}
      {result.state === 'done' && !waiting ? (
        <ol className="receipt" aria-label={t('result.receiptPreview')} data-testid="receipt-lines">
          {lines.filter(Boolean).map((l) => (
            <li key={l}>{l}</li>
          ))}
        </ol>
      ) : null}
      {printNote ? (
        <p role="status" data-testid="print-note">
          {printNote}
        </p>
      ) : null}
      {canEmail ? <EmailReceipt item={result} initial={email} /> : null}
      <div className="actions">
        {result.state === 'done' && !waiting ? (
          <button type="button" data-testid="print-receipt" onClick={() => void print()}>
            {t('result.print')}
          </button>
        ) : null}
        {result.state === 'declined' && !waiting ? (
          <button
            type="button"
            className="primary"
            data-primary
            data-testid="try-another-payment"
            onClick={() => useTerminal.getState().tryAnotherPayment()}
          >
            {t('result.tryAnother')}
          </button>
        ) : null}
        <button
          type="button"
          className={result.state === 'declined' && !waiting ? undefined : 'primary'}
          data-primary={result.state === 'declined' && !waiting ? undefined : true}
          data-testid="new-donation"
          onClick={done}
        >
          {t('result.another')}
        </button>
      </div>
    </section>
  );
}

/**
 * The donor's e-mail address for the receipt, typed on the result screen (at a kiosk by the donor).
 * Kept with the donation on the device and sent by the server once it has the payment; the line
 * below says where it stands.
 */
function EmailReceipt({ item, initial }: { item: OutboxItem; initial: string }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language === 'he' ? 'he' : 'en';
  const { data } = useServices();
  const [email, setEmail] = useState(initial);
  const [invalid, setInvalid] = useState(false);
  const [current, setCurrent] = useState<OutboxItem>(item);

  useWatchedItem(item.id, setCurrent);

  const request = data.requestReceipt?.bind(data);
  if (!request) return null;

  async function send(e: FormEvent) {
    e.preventDefault();
    setInvalid(false);
    try {
      setCurrent(await request!(item.id, email, lang));
    } catch {
      setInvalid(true);
    }
  }

  const asked = current.receipt ?? null;
  let status: string | null = null;
  if (asked?.state === 'sent') status = t('result.emailSent', { email: asked.email });
  else if (asked?.state === 'pending')
    status =
      current.state === 'done'
        ? t('result.emailSending', { email: asked.email })
        : t('result.emailAfterForward', { email: asked.email });
  else if (asked?.state === 'failed')
    status = t('result.emailFailed', {
      message: errorText(t, { errorCode: asked.error ?? 'INTERNAL_ERROR', message: asked.error ?? '' }),
    });

  return (
    <form
      className="email-receipt"
      onSubmit={(e) => void send(e)}
      noValidate
      data-testid="email-receipt-form"
    >
      <label htmlFor="receipt-email">{t('result.emailLabel')}</label>
      <div className="email-receipt-row">
        <input
          id="receipt-email"
          type="email"
          inputMode="email"
          autoComplete="off"
          dir="ltr"
          value={email}
          onChange={(e) => setEmail(e.target.value)}
          aria-invalid={invalid}
          aria-describedby="receipt-email-error"
          data-testid="receipt-email"
        />
        <button type="submit" data-testid="email-receipt">
          {t('result.email')}
        </button>
      </div>
      <p className="field-error" id="receipt-email-error" data-testid="receipt-email-error">
        {invalid ? t('result.emailInvalid') : ''}
      </p>
      {status ? (
        <p role="status" data-testid="receipt-email-status">
          {status}
        </p>
      ) : null}
    </form>
  );
}

/** Calls `onItem` with the outbox item as stored now and again after every outbox change (null: none). */
function useWatchedItem(id: string | null, onItem: (item: OutboxItem) => void): void {
  const { data } = useServices();
  useEffect(() => {
    if (!id) return;
    let live = true;
    const check = () =>
      void data
        .waitForResult(id, 0)
        .then((item) => live && onItem(item))
        .catch(() => undefined);
    const off = data.onOutboxChange(check);
    check();
    return () => {
      live = false;
      off();
    };
  }, [id, data, onItem]);
}
