/**
 * On every screen: online or offline, what waits to be sent (count and total per currency),
 * what is being confirmed with the card processor, sync progress, the last sync, the collector
 * donations are attributed to, and the banners that stop the cashier (device revoked, collector
 * not chosen).
 */
import type { Currency } from '@kupah/contracts';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { dateTime, moneyTotals } from '../format/format.ts';
import { useTerminal } from '../store/terminal-store.ts';

type Totals = Partial<Record<Currency, number>>;

/** `all` less `part`, per currency. */
function without(all: Totals, part: Totals): Totals {
  const out: Totals = {};
  for (const [c, v] of Object.entries(all) as [Currency, number][]) out[c] = v - (part[c] ?? 0);
  return out;
}

export function StatusBar({ collectorName }: { collectorName: string | null }) {
  const { t, i18n } = useTranslation();
  const { data } = useServices();
  const status = useTerminal((s) => s.status);
  const summary = useTerminal((s) => s.summary);
  const settings = useTerminal((s) => s.settings);
  const local = useTerminal((s) => s.local);
  const lang = i18n.language;
  const syncing = status.phase === 'pushing' || status.phase === 'pulling';
  // Items being confirmed have reached the server: they are counted apart, not as waiting to send.
  const waiting = summary.pending - summary.confirming;
  return (
    <header className="status-bar" data-testid="status-bar">
      <div className="status-line" aria-live="polite">
        <span
          className={status.online ? 'badge online' : 'badge offline'}
          data-testid="online-state"
          data-online={status.online}
        >
          <span aria-hidden="true">{status.online ? '●' : '○'}</span>{' '}
          {status.online ? t('status.online') : t('status.offline')}
        </span>
        <span data-testid="queue-count">
          {waiting > 0
            ? t('status.queued', {
                count: waiting,
                total: moneyTotals(without(summary.pendingTotals, summary.confirmingTotals), lang),
              })
            : t('status.nothingQueued')}
        </span>
        {summary.confirming > 0 ? (
          <span className="badge warning" data-testid="confirming-count">
            {t('status.confirming', {
              count: summary.confirming,
              total: moneyTotals(summary.confirmingTotals, lang),
            })}
          </span>
        ) : null}
        {summary.declined > 0 ? (
          <span className="badge declined" data-testid="declined-count">
            {t('status.declined', { count: summary.declined })}
          </span>
        ) : null}
        {summary.expiringSoon > 0 ? (
          <span className="badge warning" data-testid="expiring-count">
            {t('status.expiring', { count: summary.expiringSoon })}
          </span>
        ) : null}
        {summary.expired > 0 ? (
          <span className="badge declined" data-testid="expired-count">
            {t('status.expired', { count: summary.expired })}
          </span>
        ) : null}
        {(waiting > 0 || !status.online) &&
        !syncing &&
        status.phase !== 'revoked' &&
        status.phase !== 'unpaired' ? (
          <button
            type="button"
            className="send-now"
            onClick={() => void data.syncNow()}
            aria-label={t('status.sendNowLabel')}
            data-testid="send-now"
          >
            {t('status.sendNow')}
          </button>
        ) : null}
        {status.phase === 'pushing' && status.progress ? (
          <span className="sync" data-testid="sync-progress">
            {t('status.syncing', { sent: status.progress.sent, total: status.progress.total })}
            <progress
              max={Math.max(status.progress.total, 1)}
              value={status.progress.sent}
              aria-label={t('status.progressLabel')}
            />
          </span>
        ) : syncing ? (
          <span className="sync" data-testid="sync-progress">
            {status.phase === 'pulling' ? t('status.pulling') : t('status.sending')}
            <progress aria-label={t('status.progressLabel')} />
          </span>
        ) : null}
      </div>
      <div className="status-line muted">
        <span data-testid="last-sync">
          {status.lastSyncAt
            ? t('status.lastSync', { time: dateTime(status.lastSyncAt, lang) })
            : t('status.neverSynced')}
        </span>
        {!status.online && status.nextAttemptAt ? (
          <span>{t('status.nextAttempt', { time: dateTime(status.nextAttemptAt, lang) })}</span>
        ) : null}
        {settings ? (
          <span data-testid="device-name">
            {settings.orgName} · {local?.deviceName || settings.deviceName}
            {settings.sandbox ? ` · ${t('status.sandbox')}` : ''}
          </span>
        ) : null}
        {collectorName ? (
          <strong className="collector" data-testid="collector-name">
            {t('status.collector', { name: collectorName })}
          </strong>
        ) : null}
      </div>
      {status.phase === 'revoked' ? (
        <p className="banner" role="alert" data-testid="revoked-banner">
          {t('status.revoked')}
        </p>
      ) : null}
      {settings && local?.mode === 'collector' && !local.collectorAccountNum ? (
        <p className="banner" role="alert" data-testid="collector-missing">
          {t('status.collectorMissing')}
        </p>
      ) : null}
    </header>
  );
}
