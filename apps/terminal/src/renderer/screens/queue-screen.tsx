/**
 * The queue: what waits, what is being sent, what was sent, and above all what was declined
 * after it was sent (money the charity thought it had) or is about to expire unsent. What the
 * card processor has not confirmed yet ("being confirmed": it may have been charged) has a tab of
 * its own, apart from the errors: it must not be charged again. Retry (typing the card again
 * when it was sealed for one attempt only), discard with a reason and the manager PIN (the
 * discarded item stays on the device with when and why, under its own tab), and void a sent
 * payment with the manager PIN. At a kiosk the whole queue is behind the manager PIN.
 */

import type { DiscardRecord } from '@kupah/terminal-core';
import { isBeingConfirmed, type OutboxItem, OutboxRefusal } from '@kupah/terminal-core';
import { useCallback, useEffect, useId, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { PinGate, pinRefusal, useManagerPin } from '../components/pin-gate.tsx';
import { printLines } from '../components/print.ts';
import { loadReceiptNames, NO_NAMES } from '../components/receipt-names.ts';
import { dateTime, money, number, timeLeft } from '../format/format.ts';
import { methodName } from '../format/method-name.ts';
import { paymentErrors } from '../forms/validate.ts';
import { errorText } from '../i18n/server-errors.ts';
import { emptyDraft, useTerminal } from '../store/terminal-store.ts';
import { receiptLines } from './result-screen.tsx';

export type QueueTab =
  | 'pending'
  | 'confirming'
  | 'sending'
  | 'declined'
  | 'error'
  | 'expiring'
  | 'expired'
  | 'done'
  | 'discarded';
export const QUEUE_TABS: readonly QueueTab[] = [
  'pending',
  'confirming',
  'sending',
  'declined',
  'error',
  'expiring',
  'expired',
  'done',
  'discarded',
];
/** Unsent donations within this long of their expiry are "expiring soon" (as in the summary). */
export const EXPIRING_SOON_MS = 12 * 3_600_000;

const isDonation = (i: OutboxItem) => i.kind === 'charge' || i.kind === 'schedule';

export function inTab(i: OutboxItem, tab: QueueTab, now: number): boolean {
  const confirming = isBeingConfirmed(i);
  switch (tab) {
    case 'pending':
      return i.state === 'queued' && !confirming;
    case 'confirming':
      return confirming;
    case 'sending':
      return i.state === 'sending' && !confirming;
    case 'expiring':
      // Being confirmed: it reached the server, which is finding out; it cannot expire unsent.
      return (
        (i.state === 'queued' || i.state === 'sending') &&
        !confirming &&
        isDonation(i) &&
        Date.parse(i.expiresAt) - now <= EXPIRING_SOON_MS
      );
    default:
      return i.state === tab;
  }
}

/** Receipts that were voided or have a void on its way. */
function voidedReceipts(items: OutboxItem[]): Set<string> {
  const out = new Set<string>();
  for (const i of items) {
    const receipt = i.request.receiptNum;
    if (i.kind === 'void' && typeof receipt === 'string' && ['queued', 'sending', 'done'].includes(i.state))
      out.add(receipt);
  }
  return out;
}

type Action =
  | { id: string; kind: 'discard' }
  | { id: string; kind: 'void' }
  | { id: string; kind: 'reenter' };

export function QueueScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data } = useServices();
  const [tab, setTab] = useState<QueueTab>('pending');
  const [items, setItems] = useState<OutboxItem[]>([]);
  const [now, setNow] = useState(() => Date.now());
  const [action, setAction] = useState<Action | null>(null);
  const [message, setMessage] = useState<{ text: string; ok?: boolean } | null>(null);
  const tabsId = useId();
  const kiosk = useTerminal((s) => s.local?.mode === 'kiosk');
  const [unlocked, setUnlocked] = useState(!kiosk);

  const load = useCallback(async () => {
    const list = await data.listOutbox({ limit: 500 });
    setItems(list);
    setNow(Date.now());
  }, [data]);
  useEffect(() => {
    let live = true;
    const reload = () => void load().catch(() => live && setItems([]));
    reload();
    const off = data.onOutboxChange(reload);
    const clock = setInterval(() => setNow(Date.now()), 30_000);
    return () => {
      live = false;
      off();
      clearInterval(clock);
    };
  }, [data, load]);

  const counts = useMemo(() => {
    const c = {} as Record<QueueTab, number>;
    for (const tb of QUEUE_TABS) c[tb] = items.filter((i) => inTab(i, tb, now)).length;
    return c;
  }, [items, now]);
  const shown = items.filter((i) => inTab(i, tab, now));
  const voided = useMemo(() => voidedReceipts(items), [items]);

  const fail = (err: unknown) => setMessage({ text: err instanceof Error ? err.message : String(err) });

  async function retry(item: OutboxItem) {
    setMessage(null);
    try {
      await data.retry(item.id);
      setMessage({ text: t('queue.retried', { ref: item.localRef }), ok: true });
    } catch (err) {
      // Card or bank details are sealed for one attempt only: they must be typed again.
      if (err instanceof OutboxRefusal && err.fields.length > 0 && data.retryWithInstrument) {
        setAction({ id: item.id, kind: 'reenter' });
        setMessage({ text: t('queue.reenterNeeded') });
      } else fail(err);
    }
  }

  if (!unlocked) {
    return (
      <PinGate
        title={t('queue.title')}
        prompt={t('managerPin.queueLocked')}
        testId="queue-locked"
        onUnlock={() => setUnlocked(true)}
        onCancel={() => useTerminal.getState().go('amount')}
      />
    );
  }

  return (
    <section className="screen wide" data-testid="queue-screen">
      <h1 tabIndex={-1}>{t('queue.title')}</h1>
      <div className="tabs" role="tablist" aria-label={t('queue.title')}>
        {QUEUE_TABS.map((x) => (
          <button
            key={x}
            type="button"
            role="tab"
            id={`${tabsId}-${x}`}
            aria-selected={tab === x}
            aria-controls={`${tabsId}-panel`}
            className={`tab${tab === x ? ' active' : ''}${x === 'declined' && counts.declined > 0 ? ' alarm' : ''}`}
            data-testid={`queue-tab-${x}`}
            onClick={() => {
              setTab(x);
              setAction(null);
              setMessage(null);
            }}
          >
            {x === 'discarded' ? t('queue.states.discarded') : t(`queue.${x}`)}{' '}
            <span className="count">{number(counts[x], lang)}</span>
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${tabsId}-panel`} aria-labelledby={`${tabsId}-${tab}`}>
        {tab === 'declined' && counts.declined > 0 ? (
          <p className="banner" data-testid="declined-explainer">
            {t('queue.declinedExplainer')}
          </p>
        ) : null}
        {tab === 'expiring' && counts.expiring > 0 ? (
          <p className="banner" data-testid="expiring-explainer">
            {t('queue.expiringExplainer')}
          </p>
        ) : null}
        {tab === 'confirming' && counts.confirming > 0 ? (
          <p className="banner" data-testid="confirming-explainer">
            {t('queue.confirmingExplainer')}
          </p>
        ) : null}
        {shown.length === 0 ? <p className="muted">{t('queue.empty')}</p> : null}
        <ul className="queue" data-testid="queue-items">
          {shown.map((i) => (
            <QueueRow
              key={i.id}
              item={i}
              now={now}
              lang={lang}
              canVoid={
                i.state === 'done' && !!i.receiptNum && isDonation(i) && !voided.has(i.receiptNum ?? '')
              }
              voided={!!i.receiptNum && isDonation(i) && voided.has(i.receiptNum)}
              action={action?.id === i.id ? action : null}
              onAction={(a) => {
                setMessage(null);
                setAction(a);
              }}
              onRetry={() => void retry(i)}
              onMessage={setMessage}
              message={action?.id === i.id ? message : null}
            />
          ))}
        </ul>
      </div>
      {/* A message about an open form (a wrong PIN) is shown in its row, next to the form. */}
      {message && !(action && shown.some((i) => i.id === action.id)) ? (
        <QueueMessage message={message} />
      ) : null}
    </section>
  );
}

/** What the last action on the queue came to (a wrong PIN, a retry queued, a receipt printed). */
function QueueMessage({ message }: { message: { text: string; ok?: boolean } }) {
  return (
    <p
      className={message.ok ? 'note' : 'field-error'}
      role={message.ok ? 'status' : 'alert'}
      data-testid="queue-message"
    >
      {message.text}
    </p>
  );
}

interface RowProps {
  /** The message about this row's open form, shown next to it. */
  message?: { text: string; ok?: boolean } | null;
  item: OutboxItem;
  now: number;
  lang: string;
  canVoid: boolean;
  voided: boolean;
  action: Action | null;
  onAction(a: Action | null): void;
  onRetry(): void;
  onMessage(m: { text: string; ok?: boolean } | null): void;
}

function QueueRow({
  item: i,
  now,
  lang,
  canVoid,
  voided,
  action,
  onAction,
  onRetry,
  onMessage,
  message,
}: RowProps) {
  const { t } = useTranslation();
  const { bridge, data } = useServices();
  const settings = useTerminal((s) => s.settings);
  const reprint = async () => {
    if (!settings) return;
    const names = await loadReceiptNames(data).catch(() => NO_NAMES);
    const lines = [t('receipt.copy'), ...receiptLines(i, emptyDraft(), settings, t, lang, names)];
    const r = await printLines(bridge, t, lang, t('receipt.title', { org: settings.orgName }), lines);
    onMessage({ text: r.note, ok: r.printed });
  };
  const unsent = i.state === 'queued' || i.state === 'sending';
  // The server is finding out from the card processor: not an error, and never to be taken again.
  const confirming = isBeingConfirmed(i);
  const retryable = i.state === 'error' || i.state === 'declined' || i.state === 'expired';
  const discardable = retryable || (i.state === 'queued' && i.attempts === 0 && !confirming);
  const brand = i.display.brand && i.display.brand !== i.method ? `${i.display.brand} ` : '';
  const instrument = i.display.last4 ? `${brand}•••• ${i.display.last4}` : '';
  const leftMs = Date.parse(i.expiresAt) - now;
  return (
    <li
      className={`queue-item state-${confirming ? 'confirming' : i.state}`}
      data-testid="queue-item"
      data-state={i.state}
      data-confirming={confirming || undefined}
      data-kind={i.kind}
    >
      <div className="queue-main">
        <strong data-testid="queue-title">
          {i.currency
            ? money(i.amountMinor, i.currency, lang)
            : i.kind === 'void'
              ? t('queue.voidOf', { receipt: String(i.request.receiptNum ?? '') })
              : t(`queue.kinds.${i.kind}`)}
        </strong>
        {i.kind === 'schedule' ? <span className="badge">{t(`queue.kinds.${i.kind}`)}</span> : null}
        {i.method ? <span>{methodName(t, i.method, useTerminal.getState().settings)}</span> : null}
        {instrument ? <span dir="ltr">{instrument}</span> : null}
        <span>{i.display.donorName ?? (isDonation(i) ? t('queue.noDonor') : '')}</span>
        {i.display.frequency ? <span>{t(`frequency.${i.display.frequency}`)}</span> : null}
      </div>
      <div className="muted">
        <span>{dateTime(i.createdAt, lang)}</span> ·{' '}
        <span dir="ltr" data-testid="queue-ref">
          {i.receiptNum ? t('queue.receipt', { receipt: i.receiptNum }) : i.localRef}
        </span>
        {i.scheduleNum ? <span> · {t('result.schedule', { schedule: i.scheduleNum })}</span> : null} ·{' '}
        <span className={`state state-${confirming ? 'confirming' : i.state}`} data-testid="queue-state">
          {confirming
            ? t('queue.states.confirming')
            : voided && i.state === 'done'
              ? t('queue.states.voided')
              : t(`queue.states.${i.state}`)}
        </span>
        {unsent && !confirming && isDonation(i) ? (
          <span
            className={leftMs <= EXPIRING_SOON_MS ? 'warning-text' : undefined}
            data-testid="queue-expires"
          >
            {' '}
            · {t('queue.expires', { when: timeLeft(i.expiresAt, lang, now) })}
          </span>
        ) : null}
        {i.state === 'expired' ? (
          <span> · {t('queue.expiredAt', { when: timeLeft(i.expiresAt, lang, now) })}</span>
        ) : null}
        {i.attempts > 0 && unsent ? <span> · {t('queue.attempts', { count: i.attempts })}</span> : null}
      </div>
      {confirming ? (
        <div className="warning-text" data-testid="queue-item-confirming">
          {t('queue.confirmingNote')}
        </div>
      ) : i.error ? (
        <div className="field-error" data-testid="queue-item-error" dir="auto">
          {errorText(t, i.error)}
        </div>
      ) : null}
      {i.discardReason ? (
        <div className="muted" dir="auto" data-testid="queue-discard-record">
          {(i as OutboxItem & Partial<DiscardRecord>).discardedAt
            ? t('managerPin.discardBy', {
                when: dateTime((i as OutboxItem & DiscardRecord).discardedAt, lang),
                reason: i.discardReason,
              })
            : t('queue.discardedBecause', { reason: i.discardReason })}
        </div>
      ) : null}
      <div className="row">
        {retryable ? (
          <button type="button" data-testid="retry" onClick={onRetry}>
            {t('queue.retry')}
          </button>
        ) : null}
        {i.state === 'queued' && !confirming ? (
          <button type="button" data-testid="send-now" onClick={onRetry}>
            {t('queue.sendNow')}
          </button>
        ) : null}
        {discardable ? (
          <button type="button" data-testid="discard" onClick={() => onAction({ id: i.id, kind: 'discard' })}>
            {t('queue.discard')}
          </button>
        ) : null}
        {i.state === 'done' && isDonation(i) ? (
          <button type="button" data-testid="reprint" onClick={() => void reprint()}>
            {t('queue.reprint')}
          </button>
        ) : null}
        {canVoid ? (
          <button type="button" data-testid="void" onClick={() => onAction({ id: i.id, kind: 'void' })}>
            {t('queue.void')}
          </button>
        ) : null}
      </div>
      {action?.kind === 'discard' || action?.kind === 'void' ? (
        <ReasonForm item={i} kind={action.kind} onClose={() => onAction(null)} onMessage={onMessage} />
      ) : null}
      {action?.kind === 'reenter' ? (
        <ReenterForm item={i} onClose={() => onAction(null)} onMessage={onMessage} />
      ) : null}
      {message ? <QueueMessage message={message} /> : null}
    </li>
  );
}

/** Discard (reason required) or void (reason and manager PIN required). */
function ReasonForm({
  item,
  kind,
  onClose,
  onMessage,
}: {
  item: OutboxItem;
  kind: 'discard' | 'void';
  onClose(): void;
  onMessage(m: { text: string; ok?: boolean } | null): void;
}) {
  const { t } = useTranslation();
  const { data } = useServices();
  const checkPin = useManagerPin();
  const [reason, setReason] = useState('');
  const [pin, setPin] = useState('');
  const [busy, setBusy] = useState(false);
  const reasonError = reason.trim() === '' ? { key: 'queue.reasonRequired' } : null;
  const pinError = !/^\d{4,8}$/.test(pin) ? { key: 'settings.badPin' } : null;

  async function submit() {
    if (busy) return;
    if (reasonError) {
      onMessage({ text: t('queue.reasonRequired') });
      return;
    }
    setBusy(true);
    onMessage(null);
    try {
      // Both need the manager PIN (tries counted, locked after too many wrong ones).
      const verdict = await checkPin(pin);
      if (verdict.kind !== 'ok') {
        onMessage({
          text:
            verdict.kind === 'no-pin' && kind === 'void' ? t('queue.noPin') : (pinRefusal(verdict, t) ?? ''),
        });
        setPin('');
        return;
      }
      if (kind === 'discard') {
        await data.discard(item.id, reason.trim());
        onMessage({ text: t('queue.discarded', { ref: item.localRef }), ok: true });
      } else {
        await data.enqueueVoid(item.receiptNum!, reason.trim());
        onMessage({ text: t('queue.voidQueued', { receipt: item.receiptNum }), ok: true });
      }
      onClose();
    } catch (err) {
      onMessage({ text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="act"
      data-testid={`${kind}-form`}
      noValidate
      autoComplete="off"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <div className="row">
        <Field
          label={kind === 'void' ? t('queue.voidReason') : t('queue.discardReason')}
          value={reason}
          onChange={setReason}
          error={reasonError}
          autoFocus
          maxLength={256}
          testId="act-reason"
        />
        <Field
          label={t('queue.pin')}
          value={pin}
          onChange={(v) => setPin(v.replace(/\D/g, ''))}
          error={pinError}
          type="password"
          inputMode="numeric"
          maxLength={8}
          testId="act-pin"
        />
      </div>
      <div className="row">
        <button type="button" onClick={onClose} data-testid="act-cancel">
          {t('queue.cancel')}
        </button>
        <button type="submit" className="primary" data-testid="act-confirm" disabled={busy || !!reasonError}>
          {kind === 'void' ? t('queue.confirmVoid') : t('queue.confirmDiscard')}
        </button>
      </div>
    </form>
  );
}

/** A declined, failed or expired card/bank donation taken again: the details typed anew. */
function ReenterForm({
  item,
  onClose,
  onMessage,
}: {
  item: OutboxItem;
  onClose(): void;
  onMessage(m: { text: string; ok?: boolean } | null): void;
}) {
  const { t } = useTranslation();
  const { data } = useServices();
  const method = item.method ?? 'Credit_Card';
  const [card, setCard] = useState({ ccNum: '', expiry: '', cvv: '', holder: '' });
  const [bank, setBank] = useState({ routingNum: '', accountNum: '' });
  const [charity, setCharity] = useState('');
  const [busy, setBusy] = useState(false);
  const draft = {
    ...emptyDraft(),
    method,
    card,
    bank: { ...emptyDraft().bank, ...bank },
    charity: { ccNum: charity },
  };
  const errors = paymentErrors(draft, new Date());
  const valid = Object.keys(errors).length === 0;

  async function submit() {
    if (!valid || busy || !data.retryWithInstrument) return;
    setBusy(true);
    try {
      const copy = await data.retryWithInstrument(item.id, {
        card:
          method === 'Credit_Card'
            ? { ccNum: card.ccNum.replace(/[\s-]/g, ''), expiry: card.expiry, cvv: card.cvv }
            : method === 'ACH'
              ? null
              : { ccNum: charity.trim() },
        bankAccount:
          method === 'ACH'
            ? {
                routingNum: bank.routingNum.replace(/\D/g, ''),
                accountNum: bank.accountNum.replace(/[\s-]/g, ''),
              }
            : null,
      });
      onMessage({ text: t('queue.retried', { ref: copy.localRef }), ok: true });
      onClose();
    } catch (err) {
      onMessage({ text: err instanceof Error ? err.message : String(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form
      className="act"
      data-testid="reenter-form"
      noValidate
      autoComplete="off"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
      onKeyDown={(e) => {
        if (e.key === 'Escape') {
          e.preventDefault();
          onClose();
        }
      }}
    >
      <p className="muted">{t('queue.reenterHint')}</p>
      {method === 'Credit_Card' ? (
        <div className="row">
          <Field
            label={t('method.cardNumber')}
            value={card.ccNum}
            onChange={(v) => setCard({ ...card, ccNum: v.replace(/[^\d\s-]/g, '') })}
            error={errors.ccNum}
            inputMode="numeric"
            dir="ltr"
            autoFocus
            maxLength={23}
            testId="reenter-card-number"
          />
          <Field
            label={t('method.expiry')}
            value={card.expiry}
            onChange={(v) => setCard({ ...card, expiry: v })}
            error={errors.expiry}
            inputMode="numeric"
            dir="ltr"
            maxLength={7}
            testId="reenter-card-expiry"
          />
          <Field
            label={t('method.cvv')}
            value={card.cvv}
            onChange={(v) => setCard({ ...card, cvv: v.replace(/\D/g, '') })}
            error={errors.cvv}
            type="password"
            inputMode="numeric"
            dir="ltr"
            maxLength={4}
            testId="reenter-card-cvv"
          />
        </div>
      ) : method === 'ACH' ? (
        <div className="row">
          <Field
            label={t('method.routing')}
            value={bank.routingNum}
            onChange={(v) => setBank({ ...bank, routingNum: v })}
            error={errors.routingNum}
            inputMode="numeric"
            dir="ltr"
            autoFocus
            maxLength={11}
            testId="reenter-routing"
          />
          <Field
            label={t('method.account')}
            value={bank.accountNum}
            onChange={(v) => setBank({ ...bank, accountNum: v })}
            error={errors.accountNum}
            inputMode="numeric"
            dir="ltr"
            maxLength={21}
            testId="reenter-account"
          />
        </div>
      ) : (
        <Field
          label={t('method.charityNumber', {
            provider: methodName(t, method, useTerminal.getState().settings),
          })}
          value={charity}
          onChange={setCharity}
          error={errors.charity}
          dir="ltr"
          autoFocus
          maxLength={80}
          testId="reenter-charity"
        />
      )}
      <div className="row">
        <button type="button" onClick={onClose} data-testid="act-cancel">
          {t('queue.cancel')}
        </button>
        <button type="submit" className="primary" data-testid="reenter-confirm" disabled={!valid || busy}>
          {t('queue.retry')}
        </button>
      </div>
    </form>
  );
}
