/** Review, then confirm: the donation is written to the outbox before anything else happens. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { OutboxRefusal } from '../data/terminal-data.ts';
import { money } from '../format/format.ts';
import { buildEntry, chargedMinor } from '../forms/build-entry.ts';
import { clearSwipe, heldSwipe } from '../forms/swipe-capture.ts';
import { useTerminal } from '../store/terminal-store.ts';
import { personName } from './donor-screen.tsx';

/** How long the result screen waits for the server before saying "saved on this device". */
export const RESULT_WAIT_MS = 8000;

export function ReviewScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data } = useServices();
  const { draft, settings, local, go, setResult } = useTerminal();
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<string[] | null>(null);
  if (!settings) return null;
  const total = chargedMinor(draft, settings);
  const last4 =
    draft.method === 'Credit_Card'
      ? draft.swiped
        ? `${draft.swiped.brand} •••• ${draft.swiped.last4}`
        : `•••• ${draft.card.ccNum.replace(/\D/g, '').slice(-4)}`
      : draft.method === 'ACH'
        ? `•••• ${draft.bank.accountNum.replace(/\D/g, '').slice(-4)}`
        : `•••• ${draft.charity.ccNum.trim().slice(-4)}`;
  const d = draft.donor;
  const donorText =
    d.mode === 'existing' && d.existing
      ? personName(d.existing, lang)
      : d.mode === 'new'
        ? [d.firstNameHebrew, d.lastNameHebrew, d.firstName, d.lastName].filter(Boolean).join(' ')
        : d.mode === 'anonymous'
          ? t('donor.anonymous')
          : '—';

  async function confirm() {
    if (!settings) return;
    setBusy(true);
    setRefusal(null);
    try {
      const collector = local?.mode === 'collector' ? local.collectorAccountNum : null;
      const item = await data.enqueue(
        buildEntry(draft, settings, draft.swiped ? heldSwipe() : null, collector),
      );
      clearSwipe();
      setResult(item);
      go('result');
      setResult(await data.waitForResult(item.id, RESULT_WAIT_MS));
    } catch (err) {
      if (err instanceof OutboxRefusal) {
        setRefusal([err.message, ...err.fields.map((f) => `${f.field}: ${f.message}`)]);
      } else {
        setRefusal([err instanceof Error ? err.message : String(err)]);
      }
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="screen" data-testid="review-screen">
      <h1>{t('review.title')}</h1>
      <dl className="review">
        <dt>{t('review.amount')}</dt>
        <dd data-testid="review-amount">{money(total, draft.currency, lang)}</dd>
        <dt>{t('review.method')}</dt>
        <dd>
          {t(`method.${draft.method}`)} {last4}
        </dd>
        <dt>{t('review.donor')}</dt>
        <dd>{donorText}</dd>
        {draft.recurring ? (
          <>
            <dt>{t('review.schedule')}</dt>
            <dd>
              {t(`frequency.${draft.schedule.frequency}`)} ·{' '}
              {t('schedule.perPayment', {
                count: Number(draft.schedule.countText),
                amount: money(total, draft.currency, lang),
              })}
            </dd>
          </>
        ) : null}
        {draft.note ? (
          <>
            <dt>{t('review.note')}</dt>
            <dd>{draft.note}</dd>
          </>
        ) : null}
      </dl>
      {refusal ? (
        <div className="field-error" role="alert" data-testid="refusal">
          {refusal.map((line) => (
            <p key={line}>{line}</p>
          ))}
        </div>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('details')}>
          {t('nav.back')}
        </button>
        <button type="button" className="primary" disabled={busy} data-testid="confirm" onClick={confirm}>
          {busy ? t('review.working') : t('review.confirm')}
        </button>
      </div>
    </section>
  );
}
