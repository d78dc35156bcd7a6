/** Payments: search (receipt number, donor in English or Hebrew, e-mail, last 4), filters, CSV. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Campaign, Device, PaymentList, PaymentSummary } from '../api/types.ts';
import { Field, Select } from '../components/field.tsx';
import { Money, useLang } from '../components/money.tsx';
import { Empty, Loaded } from '../components/notice.tsx';
import { formatDateTime } from '../format/dates.ts';
import { hrefTo } from '../router.ts';
import { useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const STATUSES = ['', 'Success', 'Declined', 'Pending', 'Error', 'Voided', 'PartiallyRefunded', 'Refunded'];
const METHODS = ['', 'Credit_Card', 'ACH', 'Provider_1', 'Provider_2', 'Provider_3', 'Provider_4'];

export function PaymentsTable({ items }: { items: PaymentSummary[] }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { timeZone } = useConsole();
  return (
    <div className="table-wrap">
      <table data-testid="payments-table">
        <thead>
          <tr>
            <th scope="col">{t('payments.receipt')}</th>
            <th scope="col">{t('payments.date')}</th>
            <th scope="col">{t('payments.donor')}</th>
            <th scope="col">{t('payments.method')}</th>
            <th scope="col">{t('payments.status')}</th>
            <th scope="col">{t('payments.amount')}</th>
          </tr>
        </thead>
        <tbody>
          {items.map((p) => (
            <tr key={String(p.receiptNum)}>
              <td>
                <a href={hrefTo('payments', p.receiptNum)} data-testid={`payment-${p.receiptNum}`}>
                  {p.receiptNum}
                </a>
              </td>
              <td>{formatDateTime(p.createdAt, lang, timeZone)}</td>
              <td>
                <bdi>{p.donorName ?? '—'}</bdi>
              </td>
              <td>
                {t(`methods.${p.paymentMethod}`, { defaultValue: p.paymentMethod })}
                {p.last4Digits ? ` ·${p.last4Digits}` : ''}
              </td>
              <td>
                <span className={`status status-${p.status}`}>
                  {t(`statuses.${p.status}`, { defaultValue: p.status })}
                </span>
              </td>
              <td>
                <Money minor={p.amountMinor} currency={p.currency} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default function Payments() {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [q, setQ] = useState('');
  const [status, setStatus] = useState('');
  const [method, setMethod] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [campaign, setCampaign] = useState('');
  const [device, setDevice] = useState('');
  const [cursor, setCursor] = useState<string | undefined>();
  const [filters, setFilters] = useState({
    q: '',
    status: '',
    method: '',
    from: '',
    to: '',
    campaign: '',
    device: '',
  });
  const campaigns = useLoad(() => api.get<{ campaigns: Campaign[] }>('/campaigns'), []);
  const devices = useLoad(() => api.get<{ devices: Device[] }>('/devices'), []);
  const state = useLoad(
    () => api.get<PaymentList>('/payments', { ...filters, cursor, limit: 50 }),
    [filters, cursor],
  );

  return (
    <>
      <h1 tabIndex={-1}>{t('payments.title')}</h1>
      <search>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setCursor(undefined);
            setFilters({ q, status, method, from, to, campaign, device });
          }}
        >
          <Field
            label={t('payments.search')}
            type="search"
            value={q}
            onChange={setQ}
            name="q"
            hint={t('payments.searchHint')}
          />
          <Select
            label={t('payments.status')}
            value={status}
            onChange={setStatus}
            options={STATUSES.map((s) => ({ value: s, label: s ? t(`statuses.${s}`) : t('common.any') }))}
          />
          <Select
            label={t('payments.method')}
            value={method}
            onChange={setMethod}
            options={METHODS.map((s) => ({ value: s, label: s ? t(`methods.${s}`) : t('common.any') }))}
          />
          <Select
            label={t('payments.campaign')}
            value={campaign}
            onChange={setCampaign}
            options={[
              { value: '', label: t('common.any') },
              ...(campaigns.data?.campaigns ?? []).map((c) => ({
                value: String(c.campaignNumber),
                label: c.campaignName ?? `#${c.campaignNumber}`,
              })),
            ]}
          />
          <Select
            label={t('payments.device')}
            value={device}
            onChange={setDevice}
            options={[
              { value: '', label: t('common.any') },
              ...(devices.data?.devices ?? []).map((d) => ({ value: d.deviceId, label: d.name })),
            ]}
          />
          <Field label={t('payments.from')} type="date" value={from} onChange={setFrom} />
          <Field label={t('payments.to')} type="date" value={to} onChange={setTo} />
          <div className="actions">
            <button type="submit" className="primary" data-testid="payments-search">
              {t('common.search')}
            </button>
            <a
              className="button"
              href={api.href('/payments.csv', filters)}
              download="payments.csv"
              data-testid="payments-csv"
            >
              {t('payments.csv')}
            </a>
          </div>
        </form>
      </search>
      <Loaded state={state}>
        {(page) =>
          page.payments.length === 0 ? (
            <Empty>{t('payments.none')}</Empty>
          ) : (
            <>
              <PaymentsTable items={page.payments} />
              {page.nextCursor && (
                <button type="button" onClick={() => setCursor(page.nextCursor ?? undefined)}>
                  {t('common.more')}
                </button>
              )}
            </>
          )
        }
      </Loaded>
    </>
  );
}
