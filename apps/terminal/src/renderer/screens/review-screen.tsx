/** Review everything, then confirm: the donation is written to the outbox before anything else happens. */
import type { RefCampaign, RefPerson, RefReason } from '@kupah/contracts';
import { type OutboxItem, OutboxRefusal, type SyncStatus, type TerminalData } from '@kupah/terminal-core';
import { type ReactNode, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { civilDate, money, number } from '../format/format.ts';
import { methodName } from '../format/method-name.ts';
import { buildEntry, chargedMinor } from '../forms/build-entry.ts';
import { clearSwipe, heldSwipe } from '../forms/swipe-capture.ts';
import { amountMinor, scheduleAmounts } from '../forms/validate.ts';
import { type Draft, type Screen, useTerminal } from '../store/terminal-store.ts';
import { campaignLabel, reasonLabel } from './details-screen.tsx';
import { nameOnly, personName } from './donor-screen.tsx';

/** How long the result screen waits for the server before saying "saved on this device". */
export const RESULT_WAIT_MS = 8000;

const cannotReachServer = (s: SyncStatus) => !s.online || s.phase === 'waiting' || s.phase === 'revoked';

/**
 * The item once the server has answered, or as it is as soon as it is clear that no answer is
 * coming now (offline, or the sync attempt failed): a cashier taking donations offline does not
 * wait 8 seconds for each one.
 */
async function settleOrGiveUp(data: TerminalData, id: string): Promise<OutboxItem> {
  if (cannotReachServer(data.syncStatus())) return data.waitForResult(id, 0);
  let off: () => void = () => {};
  const gaveUp = new Promise<'gave up'>((resolve) => {
    off = data.onSyncStatus((s) => {
      if (cannotReachServer(s)) resolve('gave up');
    });
  });
  try {
    const first = await Promise.race([data.waitForResult(id, RESULT_WAIT_MS), gaveUp]);
    return first === 'gave up' ? data.waitForResult(id, 0) : first;
  } finally {
    off();
  }
}

type Row = 'amount' | 'method' | 'donor' | 'campaign' | 'reason' | 'schedule' | 'note' | 'collector';

/** Which review row a refused field belongs to (the data layer names fields by their request path). */
export function rowOfField(field: string): Row | null {
  const f = field.replace(/^request\./, '');
  if (f.startsWith('card') || f.startsWith('bankAccount') || f.startsWith('paymentMethod')) return 'method';
  if (f.startsWith('donor') || f === 'isAnonymousDonation') return 'donor';
  if (f.startsWith('campaign')) return 'campaign';
  if (f.startsWith('reason')) return 'reason';
  if (f.startsWith('scheduleDetails')) return 'schedule';
  if (f.startsWith('note')) return 'note';
  if (f.startsWith('collector')) return 'collector';
  if (f.startsWith('amount') || f.startsWith('currency')) return 'amount';
  return null;
}

const EDIT_SCREEN: Record<Row, Screen> = {
  amount: 'amount',
  method: 'method',
  donor: 'donor',
  campaign: 'details',
  reason: 'details',
  schedule: 'details',
  note: 'details',
  collector: 'settings',
};

/** How the payment is shown: brand •••• last 4 at most, never more of a number. */
export function instrumentText(d: Draft, methodName: string): string {
  const tail = (s: string) => s.replace(/[\s-]/g, '').slice(-4);
  if (d.method === 'Credit_Card') {
    if (d.swiped) return `${d.swiped.brand || methodName} •••• ${d.swiped.last4}`;
    return `${methodName} •••• ${tail(d.card.ccNum)}`;
  }
  if (d.method === 'ACH') return `${methodName} •••• ${tail(d.bank.accountNum)}`;
  return `${methodName} •••• ${tail(d.charity.ccNum)}`;
}

interface Refusal {
  code: OutboxRefusal['code'] | 'OTHER';
  detail: string;
  fields: Partial<Record<Row, string[]>>;
  other: string[];
}

function refusalOf(err: unknown): Refusal {
  if (err instanceof OutboxRefusal) {
    const fields: Refusal['fields'] = {};
    const other: string[] = [];
    for (const f of err.fields) {
      const row = rowOfField(f.field);
      const line = `${f.field} ${f.message}`;
      if (row) fields[row] = [...(fields[row] ?? []), line];
      else other.push(line);
    }
    return { code: err.code, detail: err.message, fields, other };
  }
  return { code: 'OTHER', detail: err instanceof Error ? err.message : String(err), fields: {}, other: [] };
}

export function ReviewScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data } = useServices();
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  const local = useTerminal((s) => s.local);
  const { go, back, setResult } = useTerminal.getState();
  const [busy, setBusy] = useState(false);
  const [refusal, setRefusal] = useState<Refusal | null>(null);
  const [refs, setRefs] = useState<{
    campaigns: RefCampaign[];
    reasons: RefReason[];
    collectors: RefPerson[];
  }>({
    campaigns: [],
    reasons: [],
    collectors: [],
  });
  useEffect(() => {
    let live = true;
    void Promise.all([data.campaigns(), data.reasons(), data.collectors()]).then(
      ([campaigns, reasons, collectors]) => {
        if (live) setRefs({ campaigns, reasons, collectors });
      },
    );
    return () => {
      live = false;
    };
  }, [data]);
  if (!settings) return null;

  const per = chargedMinor(draft, settings);
  const amounts = draft.recurring ? scheduleAmounts(draft, per) : null;
  const cur = draft.currency;
  const d = draft.donor;
  const collectorNum = local?.mode === 'collector' ? local.collectorAccountNum : null;
  const collector = collectorNum ? refs.collectors.find((c) => c.accountNum === collectorNum) : null;
  const reasonName = (n: number | null) => {
    const r = refs.reasons.find((x) => x.reasonNum === n);
    return r ? reasonLabel(r, lang) : n === null ? '—' : String(n);
  };
  const campaign = refs.campaigns.find((c) => c.campaignNum === draft.campaignNum);
  const newDonorText = [
    [d.firstName, d.lastName].filter(Boolean).join(' '),
    [d.firstNameHebrew, d.lastNameHebrew].filter(Boolean).join(' '),
    d.phone,
    d.email,
  ]
    .filter(Boolean)
    .join(' · ');
  const donorText =
    d.mode === 'existing' && d.existing
      ? // At a kiosk the donor sees their own name only (no account number: see the donor screen).
        local?.mode === 'kiosk'
        ? nameOnly(d.existing, lang) || t('donor.anonymous')
        : `${personName(d.existing, lang)} (${d.existing.accountNum})`
      : d.mode === 'new'
        ? `${newDonorText} (${t('review.newDonor')})`
        : d.mode === 'anonymous'
          ? t('donor.anonymous')
          : t('review.noDonor');

  async function confirm() {
    if (!settings || busy) return;
    setBusy(true);
    setRefusal(null);
    try {
      const swipe = draft.method === 'Credit_Card' && draft.swiped ? heldSwipe() : null;
      const item = await data.enqueue(buildEntry(draft, settings, swipe, collectorNum));
      clearSwipe();
      setResult(item, true);
      go('result');
      let settled = item;
      try {
        settled = await settleOrGiveUp(data, item.id);
      } catch {
        // Written durably already: the result screen says "saved on this device".
      }
      // Only if the cashier is still looking at this donation's result.
      if (useTerminal.getState().result?.id === item.id) setResult(settled, false);
    } catch (err) {
      setRefusal(refusalOf(err));
      setBusy(false);
    }
  }

  const row = (key: Row, label: string, value: ReactNode, testId?: string) => {
    const problems = refusal?.fields[key];
    return (
      <div className={problems ? 'review-row invalid' : 'review-row'} key={key}>
        <dt>{label}</dt>
        <dd data-testid={testId}>
          {value}
          {problems ? (
            <span className="field-error" data-testid={`refused-${key}`}>
              {problems.map((p) => (
                <span key={p} className="refused-line" dir="auto">
                  {p}
                </span>
              ))}
            </span>
          ) : null}
        </dd>
        <dd className="review-edit">
          {key === 'collector' ? null : (
            <button
              type="button"
              className="link"
              data-testid={`edit-${key}`}
              aria-label={t('review.editLabel', { what: label })}
              onClick={() => go(EDIT_SCREEN[key])}
            >
              {t('review.edit')}
            </button>
          )}
        </dd>
      </div>
    );
  };

  const kiosk = local?.mode === 'kiosk';
  return (
    <section className="screen" data-testid="review-screen">
      <h1 tabIndex={-1}>{t('review.title')}</h1>
      <dl className="review">
        {row(
          'amount',
          draft.recurring ? t('review.eachPayment') : t('review.amount'),
          <>
            <span data-testid="review-amount">{money(per, cur, lang)}</span>
            {draft.coverFee && settings.coverFeePercent > 0 ? (
              <span className="muted"> {t('review.feeIncluded', { percent: settings.coverFeePercent })}</span>
            ) : null}
          </>,
        )}
        {row(
          'method',
          t('review.method'),
          <span dir="auto">{instrumentText(draft, methodName(t, draft.method, settings))}</span>,
          'review-method',
        )}
        {row('donor', t('review.donor'), donorText, 'review-donor')}
        {collectorNum
          ? row('collector', t('review.collector'), collector ? personName(collector, lang) : collectorNum)
          : null}
        {kiosk
          ? null
          : row('campaign', t('review.campaign'), campaign ? campaignLabel(campaign) : t('details.none'))}
        {kiosk
          ? null
          : row(
              'reason',
              draft.split ? t('review.reasons') : t('review.reason'),
              draft.split ? (
                <ul className="plain" data-testid="review-split">
                  {draft.parts.map((p, i) => (
                    // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity but their place
                    <li key={i}>
                      {reasonName(p.reasonNum)}: {money(amountMinor(p.amountText) ?? 0, cur, lang)}
                    </li>
                  ))}
                </ul>
              ) : draft.reasonNum === null ? (
                t('details.none')
              ) : (
                reasonName(draft.reasonNum)
              ),
            )}
        {draft.recurring && amounts
          ? row(
              'schedule',
              t('review.schedule'),
              <span data-testid="review-schedule">
                {t(`frequency.${draft.schedule.frequency}`)} ·{' '}
                {t('schedule.summary', {
                  count: amounts.count,
                  countText: number(amounts.count, lang),
                  amount: money(amounts.perMinor, cur, lang),
                  total: money(amounts.totalMinor, cur, lang),
                })}
                {amounts.firstMinor !== amounts.perMinor
                  ? ` · ${t('review.firstPayment', { amount: money(amounts.firstMinor, cur, lang) })}`
                  : ''}{' '}
                · {t('review.starts', { date: civilDate(draft.schedule.startDate, lang) })}
              </span>,
            )
          : null}
        {draft.note ? row('note', t('review.note'), <span dir="auto">{draft.note}</span>) : null}
      </dl>
      <p className="review-total" data-testid="review-total">
        {draft.recurring && amounts
          ? t('review.totalSchedule', { total: money(amounts.totalMinor, cur, lang) })
          : t('review.total', { total: money(per, cur, lang) })}
      </p>
      {refusal ? (
        <div className="refusal" role="alert" data-testid="refusal">
          <p className="field-error">{t(`review.refusal.${refusal.code}`)}</p>
          <p className="muted" dir="auto">
            {refusal.detail}
          </p>
          {refusal.other.map((line) => (
            <p key={line} className="muted" dir="auto">
              {line}
            </p>
          ))}
        </div>
      ) : null}
      <div className="actions">
        <button type="button" onClick={back} data-testid="review-back">
          {t('nav.back')}
        </button>
        <button
          type="button"
          className="primary"
          data-primary
          disabled={busy}
          aria-busy={busy}
          data-testid="confirm"
          onClick={() => void confirm()}
        >
          {busy ? t('review.working') : t('review.confirm')}
        </button>
      </div>
    </section>
  );
}
