/** Schedules: the list by status; one schedule's upcoming instalments (civil and Hebrew dates), failures; pause/resume/cancel. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ScheduleDetail, ScheduleSummary } from '../api/types.ts';
import { ConfirmDialog } from '../components/dialog.tsx';
import { Select } from '../components/field.tsx';
import { Money, useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { formatDate, formatDateTime } from '../format/dates.ts';
import { hrefTo } from '../router.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const STATUSES = ['', 'pending', 'active', 'paused', 'completed', 'cancelled', 'failed'];

/** Major-unit amounts of the schedule summary in exact minor units (2 decimals at most). */
const toMinor = (major: number) => Math.round(major * 100);

export default function Schedules({ scheduleNum }: { scheduleNum?: string | undefined }) {
  return scheduleNum ? <ScheduleView scheduleNum={scheduleNum} /> : <ScheduleList />;
}

function ScheduleList() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api } = useConsole();
  const [status, setStatus] = useState('');
  const state = useLoad(() => api.get<{ schedules: ScheduleSummary[] }>('/schedules', { status }), [status]);
  return (
    <>
      <h1 tabIndex={-1}>{t('schedules.title')}</h1>
      <div className="filters">
        <Select
          label={t('schedules.status')}
          value={status}
          onChange={setStatus}
          options={STATUSES.map((s) => ({
            value: s,
            label: s ? t(`scheduleStatuses.${s}`) : t('common.any'),
          }))}
        />
      </div>
      <Loaded state={state}>
        {({ schedules }) =>
          schedules.length === 0 ? (
            <Empty>{t('schedules.none')}</Empty>
          ) : (
            <div className="table-wrap">
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('schedules.number')}</th>
                    <th scope="col">{t('schedules.donor')}</th>
                    <th scope="col">{t('schedules.frequency')}</th>
                    <th scope="col">{t('schedules.each')}</th>
                    <th scope="col">{t('schedules.next')}</th>
                    <th scope="col">{t('schedules.charged')}</th>
                    <th scope="col">{t('schedules.status')}</th>
                  </tr>
                </thead>
                <tbody>
                  {schedules.map((s) => (
                    <tr key={s.scheduleNum}>
                      <td>
                        <a href={hrefTo('schedules', s.scheduleNum)}>#{s.scheduleNum}</a>
                      </td>
                      <td>{s.donorId ? <a href={hrefTo('donors', s.donorId)}>{s.donorId}</a> : '—'}</td>
                      <td>{t(`frequencies.${s.frequency}`, { defaultValue: s.frequency })}</td>
                      <td>
                        <Money minor={toMinor(s.amountPerPayment)} currency={s.currency} />
                      </td>
                      <td>{s.nextPaymentDate ? formatDate(s.nextPaymentDate, lang) : '—'}</td>
                      <td>
                        {s.paymentsCharged}/{s.totalPaymentsCount || '∞'}
                        {s.paymentsMissed > 0
                          ? ` · ${t('schedules.missed', { count: s.paymentsMissed })}`
                          : ''}
                      </td>
                      <td>{t(`scheduleStatuses.${s.status}`, { defaultValue: s.status })}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  );
}

function ScheduleView({ scheduleNum }: { scheduleNum: string }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const canChange = useCan('manager');
  const state = useLoad(
    () => api.get<ScheduleDetail>(`/schedules/${encodeURIComponent(scheduleNum)}`),
    [scheduleNum],
  );
  const [action, setAction] = useState<'pause' | 'resume' | 'cancel' | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const run = async () => {
    if (!action) return;
    setBusy(true);
    try {
      await api.post(`/schedules/${encodeURIComponent(scheduleNum)}/${action}`, {});
      setAction(null);
      setError(null);
      state.reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <p>
        <a href={hrefTo('schedules')}>{t('schedules.back')}</a>
      </p>
      <h1 tabIndex={-1}>{t('schedules.detailTitle', { scheduleNum })}</h1>
      <Loaded state={state}>
        {({ schedule: s, upcoming, failures }) => (
          <>
            <dl className="facts">
              <dt>{t('schedules.status')}</dt>
              <dd>{t(`scheduleStatuses.${s.status}`, { defaultValue: s.status })}</dd>
              <dt>{t('schedules.frequency')}</dt>
              <dd>{t(`frequencies.${s.frequency}`, { defaultValue: s.frequency })}</dd>
              <dt>{t('schedules.each')}</dt>
              <dd>
                <Money minor={toMinor(s.amountPerPayment)} currency={s.currency} />
              </dd>
              <dt>{t('schedules.total')}</dt>
              <dd>
                <Money minor={toMinor(s.scheduleTotal)} currency={s.currency} />
              </dd>
              <dt>{t('schedules.start')}</dt>
              <dd>{formatDate(s.startDate, lang)}</dd>
              <dt>{t('schedules.charged')}</dt>
              <dd>
                {s.paymentsCharged}/{s.totalPaymentsCount || '∞'}
              </dd>
              <dt>{t('payments.method')}</dt>
              <dd>
                {t(`methods.${s.paymentMethod}`, { defaultValue: s.paymentMethod })}
                {s.last4Digits ? ` ·${s.last4Digits}` : ''}
              </dd>
            </dl>
            {canChange && (
              <div className="actions">
                {(s.status === 'active' || s.status === 'pending') && (
                  <button type="button" onClick={() => setAction('pause')}>
                    {t('schedules.pause')}
                  </button>
                )}
                {s.status === 'paused' && (
                  <button type="button" onClick={() => setAction('resume')}>
                    {t('schedules.resume')}
                  </button>
                )}
                {s.status !== 'cancelled' && s.status !== 'completed' && (
                  <button type="button" className="danger" onClick={() => setAction('cancel')}>
                    {t('schedules.cancel')}
                  </button>
                )}
              </div>
            )}
            <section aria-labelledby="upcoming-title">
              <h2 id="upcoming-title">{t('schedules.upcoming')}</h2>
              {upcoming.length === 0 ? (
                <Empty>{t('schedules.noUpcoming')}</Empty>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">#</th>
                      <th scope="col">{t('schedules.civilDate')}</th>
                      <th scope="col">{t('schedules.hebrewDate')}</th>
                      <th scope="col">{t('payments.amount')}</th>
                      <th scope="col">{t('schedules.status')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {upcoming.map((i) => (
                      <tr key={i.sequence}>
                        <td>{i.sequence}</td>
                        <td>{formatDate(i.dueDate, lang)}</td>
                        <td>
                          <bdi>{lang === 'he' ? (i.hebrewDateHebrew ?? i.hebrewDate) : i.hebrewDate}</bdi>
                        </td>
                        <td>
                          <Money minor={i.amountMinor} currency={s.currency} />
                        </td>
                        <td>{t(`instalmentStatuses.${i.status}`, { defaultValue: i.status })}</td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
            <section aria-labelledby="failures-title">
              <h2 id="failures-title">{t('schedules.failures')}</h2>
              {failures.length === 0 ? (
                <Empty>{t('schedules.noFailures')}</Empty>
              ) : (
                <table>
                  <thead>
                    <tr>
                      <th scope="col">{t('payments.date')}</th>
                      <th scope="col">{t('payments.receipt')}</th>
                      <th scope="col">{t('payments.amount')}</th>
                      <th scope="col">{t('schedules.error')}</th>
                    </tr>
                  </thead>
                  <tbody>
                    {failures.map((f) => (
                      <tr key={f.receiptNum}>
                        <td>{formatDateTime(f.createdAt, lang, timeZone)}</td>
                        <td>
                          <a href={hrefTo('payments', f.receiptNum)}>{f.receiptNum}</a>
                        </td>
                        <td>
                          <Money minor={f.amountMinor} currency={f.currency} />
                        </td>
                        <td>
                          <bdi>{f.errorMessage ?? f.errorCode ?? f.status}</bdi>
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              )}
            </section>
          </>
        )}
      </Loaded>
      {action && (
        <ConfirmDialog
          title={t(`schedules.${action}Title`, { scheduleNum })}
          message={t(`schedules.${action}Confirm`)}
          confirmLabel={t(`schedules.${action}`)}
          danger={action === 'cancel'}
          busy={busy}
          onClose={() => {
            setAction(null);
            setError(null);
          }}
          onConfirm={() => void run()}
          error={<ErrorNotice error={error} />}
        />
      )}
    </>
  );
}
