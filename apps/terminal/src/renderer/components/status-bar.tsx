/** Always visible: online or offline, what waits to be sent (count and total), sync progress. */
import type { Currency } from '@kupah/contracts';
import { useTranslation } from 'react-i18next';
import { dateTime, money } from '../format/format.ts';
import { useTerminal } from '../store/terminal-store.ts';

export function StatusBar({ collectorName }: { collectorName: string | null }) {
  const { t, i18n } = useTranslation();
  const status = useTerminal((s) => s.status);
  const summary = useTerminal((s) => s.summary);
  const lang = i18n.language;
  const totals = Object.entries(summary.pendingTotals)
    .filter(([, v]) => (v ?? 0) > 0)
    .map(([c, v]) => money(v ?? 0, c as Currency, lang))
    .join(' + ');
  return (
    <header className="status-bar" aria-live="polite" data-testid="status-bar">
      <span className={status.online ? 'badge online' : 'badge offline'} data-testid="online-state">
        {status.online ? t('status.online') : t('status.offline')}
      </span>
      <span data-testid="queue-count">
        {summary.pending > 0
          ? t('status.queued', { count: summary.pending, total: totals || '0' })
          : t('status.nothingQueued')}
      </span>
      {summary.declined > 0 ? (
        <span className="badge declined">{t('status.declined', { count: summary.declined })}</span>
      ) : null}
      {status.phase === 'pushing' && status.progress ? (
        <span data-testid="sync-progress">
          {t('status.syncing', { sent: status.progress.sent, total: status.progress.total })}
          <progress max={status.progress.total} value={status.progress.sent} />
        </span>
      ) : status.phase === 'pulling' ? (
        <span>{t('status.pulling')}</span>
      ) : null}
      <span className="muted">
        {status.lastSyncAt
          ? t('status.lastSync', { time: dateTime(status.lastSyncAt, lang) })
          : t('status.neverSynced')}
      </span>
      {collectorName ? <span>{t('status.collector', { name: collectorName })}</span> : null}
      {status.phase === 'revoked' ? (
        <p className="banner" role="alert" data-testid="revoked-banner">
          {t('status.revoked')}
        </p>
      ) : null}
    </header>
  );
}
