/**
 * Today: totals and counts for today, the last 7 or 30 days, by campaign, reason, device,
 * collector, method and currency; the amount by hour or day (the chart, its own chunk); what is
 * pending, declined or waiting on devices.
 */
import { lazy, Suspense, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Dashboard, DashboardRow } from '../api/types.ts';
import { Money, useLang } from '../components/money.tsx';
import { Empty, Loaded, Loading } from '../components/notice.tsx';
import { formatDate } from '../format/dates.ts';
import { formatCount, type UiLanguage } from '../format/money.ts';
import { useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const Chart = lazy(() => import('../components/chart.tsx'));

const RANGES = ['today', '7d', '30d'] as const;
const BREAKDOWNS = [
  ['campaign', 'byCampaign'],
  ['reason', 'byReason'],
  ['device', 'byDevice'],
  ['collector', 'byCollector'],
  ['method', 'byMethod'],
  ['currency', 'byCurrency'],
] as const;

export default function Today() {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [range, setRange] = useState<(typeof RANGES)[number]>('today');
  const state = useLoad(() => api.get<Dashboard>('/dashboard', { range }), [range]);
  return (
    <>
      <h1 tabIndex={-1}>{t('today.title')}</h1>
      <fieldset className="tabs">
        <legend className="visually-hidden">{t('today.range')}</legend>
        {RANGES.map((r) => (
          <button
            key={r}
            type="button"
            aria-pressed={range === r}
            className={range === r ? 'tab active' : 'tab'}
            onClick={() => setRange(r)}
            data-testid={`range-${r}`}
          >
            {t(`today.ranges.${r}`)}
          </button>
        ))}
      </fieldset>
      <Loaded state={state}>{(d) => <DashboardView d={d} />}</Loaded>
    </>
  );
}

/** A bucket's label: `2026-11-26T09:00` → "09:00"; `2026-11-26` → the day in the UI language. */
export function bucketLabel(at: string, lang: UiLanguage): string {
  const hour = /T(\d{2}:\d{2})/.exec(at);
  if (hour) return hour[1]!;
  return formatDate(at, lang).replace(/,? \d{4}$/, '');
}

function rowLabel(
  r: DashboardRow,
  kind: string,
  t: (k: string, o?: Record<string, unknown>) => string,
): string {
  if (kind === 'method' && r.key) return t(`methods.${r.key}`, { defaultValue: r.key });
  if (r.label) return r.label;
  if (r.key === null || r.key === '') return t('today.none');
  return r.key;
}

function DashboardView({ d }: { d: Dashboard }) {
  const { t } = useTranslation();
  const lang = useLang();
  const currencies = [...new Set((d.totals ?? []).map((r) => r.currency))];
  const [chartCurrency, setChartCurrency] = useState<string | null>(null);
  const shown = chartCurrency && currencies.includes(chartCurrency) ? chartCurrency : (currencies[0] ?? null);
  const points = (d.series?.points ?? []).filter((p) => p.currency === shown);
  const unit = d.series?.unit ?? (d.range === 'today' ? 'hour' : 'day');
  const bars = useMemo(
    () => points.map((p) => ({ label: bucketLabel(p.at, lang), amountMinor: p.succeeded.amountMinor })),
    [points, lang],
  );
  const declinedCount = (d.declined ?? []).reduce((n, r) => n + r.count, 0);
  return (
    <>
      <section aria-labelledby="totals-title">
        <h2 id="totals-title">{t('today.totals')}</h2>
        {currencies.length === 0 ? (
          <Empty>{t('today.nothing')}</Empty>
        ) : (
          <ul className="tiles" data-testid="totals">
            {d.totals.map((r) => (
              <li key={r.currency} className="tile">
                <span className="tile-value" data-testid={`total-${r.currency}`}>
                  <Money minor={r.succeeded.amountMinor} currency={r.currency} />
                </span>
                <span className="tile-label" data-testid={`count-${r.currency}`}>
                  {t('today.payments', {
                    count: r.succeeded.count,
                    formatted: formatCount(r.succeeded.count, lang),
                  })}
                </span>
                {r.voided.count > 0 && (
                  <span className="tile-label">
                    {t('today.voidedCount', { formatted: formatCount(r.voided.count, lang) })}{' '}
                    <Money minor={r.voided.amountMinor} currency={r.currency} />
                  </span>
                )}
              </li>
            ))}
          </ul>
        )}
        <ul className="tiles small">
          <li className="tile">
            <span className="tile-value" data-testid="pending-count">
              {formatCount(d.pending?.count ?? 0, lang)}
            </span>
            <span className="tile-label">{t('today.pending')}</span>
          </li>
          <li className="tile">
            <span className="tile-value" data-testid="declined-count">
              {formatCount(declinedCount, lang)}
            </span>
            <span className="tile-label">{t('today.declined')}</span>
          </li>
          <li className="tile">
            <span className="tile-value" data-testid="queued-count">
              {formatCount(d.deviceQueue?.operations ?? 0, lang)}
            </span>
            <span className="tile-label">
              {t('today.waitingOnDevices', { devices: formatCount(d.deviceQueue?.devices ?? 0, lang) })}
            </span>
          </li>
        </ul>
        {(d.deviceQueue?.byDevice ?? []).length > 0 && (
          <ul>
            {d.deviceQueue.byDevice.map((w) => (
              <li key={w.deviceId}>
                {t('today.deviceWaiting', { name: w.name ?? w.deviceId, count: w.queueDepth })}
              </li>
            ))}
          </ul>
        )}
      </section>
      <section aria-labelledby="chart-title">
        <h2 id="chart-title">{t(unit === 'hour' ? 'today.byHour' : 'today.byDay')}</h2>
        {currencies.length > 1 && (
          <fieldset className="tabs">
            <legend className="visually-hidden">{t('today.currency')}</legend>
            {currencies.map((c) => (
              <button
                key={c}
                type="button"
                className={c === shown ? 'tab active' : 'tab'}
                aria-pressed={c === shown}
                onClick={() => setChartCurrency(c)}
              >
                {c}
              </button>
            ))}
          </fieldset>
        )}
        {!shown || points.length === 0 ? (
          <Empty>{t('today.nothing')}</Empty>
        ) : (
          <>
            <Suspense fallback={<Loading />}>
              <Chart
                bars={bars}
                currency={shown}
                lang={lang}
                label={t(unit === 'hour' ? 'today.chartLabelHour' : 'today.chartLabelDay', {
                  currency: shown,
                })}
              />
            </Suspense>
            <details>
              <summary>{t('today.chartTable')}</summary>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t(unit === 'hour' ? 'today.hour' : 'today.day')}</th>
                    <th scope="col">{t('today.count')}</th>
                    <th scope="col">{t('today.amount')}</th>
                  </tr>
                </thead>
                <tbody>
                  {points.map((p) => (
                    <tr key={p.at}>
                      <td>{bucketLabel(p.at, lang)}</td>
                      <td>{formatCount(p.succeeded.count, lang)}</td>
                      <td>
                        <Money minor={p.succeeded.amountMinor} currency={p.currency} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </details>
          </>
        )}
      </section>
      <div className="grid">
        {BREAKDOWNS.map(([kind, field]) => {
          const rows = d[field] ?? [];
          return (
            <section key={kind} aria-labelledby={`by-${kind}-title`} className="card">
              <h2 id={`by-${kind}-title`}>{t(`today.by.${kind}`)}</h2>
              {rows.length === 0 ? (
                <Empty>{t('today.nothing')}</Empty>
              ) : (
                <div className="table-wrap">
                  <table data-testid={`by-${kind}`}>
                    <thead>
                      <tr>
                        <th scope="col">{t(`today.by.${kind}`)}</th>
                        <th scope="col">{t('today.count')}</th>
                        <th scope="col">{t('today.amount')}</th>
                        <th scope="col">{t('today.declinedShort')}</th>
                      </tr>
                    </thead>
                    <tbody>
                      {rows.map((r) => (
                        <tr key={`${r.key}-${r.currency}`}>
                          <td>
                            <bdi>{rowLabel(r, kind, t)}</bdi>
                          </td>
                          <td>{formatCount(r.succeeded.count, lang)}</td>
                          <td>
                            <Money minor={r.succeeded.amountMinor} currency={r.currency} />
                          </td>
                          <td>{formatCount(r.declined.count, lang)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          );
        })}
      </div>
    </>
  );
}
