/**
 * The queue: what waits, what was sent, and above all what was declined after it was sent (money
 * the charity thought it had). Retry, discard with a reason, and void with the manager PIN.
 */
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import type { OutboxItem, OutboxState } from '../data/terminal-data.ts';
import { dateTime, money } from '../format/format.ts';

type Tab = 'pending' | 'done' | 'declined' | 'error' | 'expiring' | 'expired';
const TABS: Tab[] = ['pending', 'declined', 'error', 'expiring', 'expired', 'done'];
const STATES: Record<Tab, OutboxState[]> = {
  pending: ['queued', 'sending'],
  done: ['done'],
  declined: ['declined'],
  error: ['error'],
  expiring: ['queued', 'sending'],
  expired: ['expired'],
};
const EXPIRING_MS = 12 * 3_600_000;

export function QueueScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data } = useServices();
  const [tab, setTab] = useState<Tab>('pending');
  const [items, setItems] = useState<OutboxItem[]>([]);
  const [acting, setActing] = useState<{ id: string; kind: 'discard' | 'void' } | null>(null);
  const [reason, setReason] = useState('');
  const [pin, setPin] = useState('');
  const [message, setMessage] = useState<string | null>(null);

  const load = useCallback(async () => {
    const list = await data.listOutbox({ states: STATES[tab], limit: 200 });
    const now = Date.now();
    setItems(
      tab === 'expiring'
        ? list.filter((i) => Date.parse(i.expiresAt) - now < EXPIRING_MS)
        : list.filter((i) => i.kind === 'charge' || i.kind === 'schedule'),
    );
  }, [data, tab]);
  useEffect(() => {
    void load();
    return data.onOutboxChange(() => void load());
  }, [data, load]);

  async function act(item: OutboxItem) {
    if (!acting) return;
    setMessage(null);
    if (!reason.trim()) {
      setMessage(t('queue.reasonRequired'));
      return;
    }
    try {
      if (acting.kind === 'discard') {
        await data.discard(item.id, reason.trim());
      } else {
        const local = await data.getLocalSettings();
        if (!local.managerPinHash || !data.checkManagerPin) {
          setMessage(t('queue.noPin'));
          return;
        }
        if (!(await data.checkManagerPin(pin))) {
          setMessage(t('queue.badPin'));
          return;
        }
        await data.enqueueVoid(item.receiptNum!, reason.trim());
      }
      setActing(null);
      setReason('');
      setPin('');
    } catch (err) {
      setMessage(err instanceof Error ? err.message : String(err));
    }
  }

  return (
    <section className="screen" data-testid="queue-screen">
      <h1>{t('queue.title')}</h1>
      <div className="tabs" role="tablist">
        {TABS.map((x) => (
          <button
            key={x}
            type="button"
            role="tab"
            aria-selected={tab === x}
            className={tab === x ? 'tab active' : 'tab'}
            data-testid={`queue-tab-${x}`}
            onClick={() => setTab(x)}
          >
            {t(`queue.${x}`)}
          </button>
        ))}
      </div>
      {items.length === 0 ? <p className="muted">{t('queue.empty')}</p> : null}
      <ul className="queue" data-testid="queue-items">
        {items.map((i) => (
          <li
            key={i.id}
            className={`queue-item state-${i.state}`}
            data-testid="queue-item"
            data-state={i.state}
          >
            <div>
              <strong>{i.currency ? money(i.amountMinor, i.currency, lang) : ''}</strong>{' '}
              {i.method ? t(`method.${i.method}`) : ''} {i.display.last4 ? `•••• ${i.display.last4}` : ''} ·{' '}
              {i.display.donorName ?? t('queue.anonymous')}
            </div>
            <div className="muted">
              {dateTime(i.createdAt, lang)} · {i.receiptNum ?? i.localRef} · {t(`queue.states.${i.state}`)}
              {i.state === 'queued' || i.state === 'sending'
                ? ` · ${t('queue.expiresIn', { hours: Math.max(0, Math.floor((Date.parse(i.expiresAt) - Date.now()) / 3_600_000)) })}`
                : ''}
            </div>
            {i.error ? (
              <div className="field-error" data-testid="queue-item-error">
                {i.error.message}
              </div>
            ) : null}
            <div className="row">
              {i.state === 'error' || i.state === 'declined' ? (
                <button
                  type="button"
                  onClick={() => void data.retry(i.id).catch((e: Error) => setMessage(e.message))}
                >
                  {t('queue.retry')}
                </button>
              ) : null}
              {i.state !== 'done' && i.state !== 'discarded' ? (
                <button type="button" onClick={() => setActing({ id: i.id, kind: 'discard' })}>
                  {t('queue.discard')}
                </button>
              ) : null}
              {i.state === 'done' && i.receiptNum && i.kind === 'charge' ? (
                <button
                  type="button"
                  data-testid="void"
                  onClick={() => setActing({ id: i.id, kind: 'void' })}
                >
                  {t('queue.void')}
                </button>
              ) : null}
            </div>
            {acting?.id === i.id ? (
              <div className="row">
                <label className="inline">
                  {acting.kind === 'void' ? t('queue.voidReason') : t('queue.discardReason')}
                  <input
                    value={reason}
                    data-testid="act-reason"
                    onChange={(e) => setReason(e.target.value)}
                  />
                </label>
                {acting.kind === 'void' ? (
                  <label className="inline">
                    {t('queue.pin')}
                    <input
                      type="password"
                      inputMode="numeric"
                      value={pin}
                      data-testid="act-pin"
                      onChange={(e) => setPin(e.target.value)}
                    />
                  </label>
                ) : null}
                <button
                  type="button"
                  className="primary"
                  data-testid="act-confirm"
                  onClick={() => void act(i)}
                >
                  {acting.kind === 'void' ? t('queue.void') : t('queue.discard')}
                </button>
              </div>
            ) : null}
          </li>
        ))}
      </ul>
      {message ? (
        <p className="field-error" role="alert" data-testid="queue-message">
          {message}
        </p>
      ) : null}
    </section>
  );
}
