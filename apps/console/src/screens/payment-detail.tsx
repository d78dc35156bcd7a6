/**
 * One payment: parties, split over reasons, device facts, gateway reference, refunds, webhook
 * deliveries; void and refund (full or partial, with a reason, confirmed in a dialog) for a
 * manager or owner. A viewer sees neither button (and the server answers 403 all the same).
 */
import type { RefundResponse } from '@kupah/contracts';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { PaymentDetail as Detail } from '../api/types.ts';
import { ConfirmDialog } from '../components/dialog.tsx';
import { Field } from '../components/field.tsx';
import { Money, MoneyInput, useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { RecordTable } from '../components/record-table.tsx';
import { formatDateTime } from '../format/dates.ts';
import type { UiLanguage } from '../format/money.ts';
import { hrefTo } from '../router.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

export default function PaymentDetail({ receiptNum }: { receiptNum: string }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const state = useLoad(() => api.get<Detail>(`/payments/${encodeURIComponent(receiptNum)}`), [receiptNum]);
  return (
    <>
      <p>
        <a href={hrefTo('payments')}>{t('payments.back')}</a>
      </p>
      <h1 tabIndex={-1}>{t('payments.detailTitle', { receiptNum })}</h1>
      <Loaded state={state}>{(p) => <PaymentView p={p} reload={state.reload} />}</Loaded>
    </>
  );
}

type Party = Detail['donor'];

/** A refund's idempotency key (the server takes 8–64 letters, digits, `_` or `-`). */
export function newTransactionId(): string {
  return `console-${crypto.randomUUID()}`;
}

export function partyName(p: Party, lang: UiLanguage): string | null {
  if (!p) return null;
  const en = [p.firstName, p.lastName].filter(Boolean).join(' ');
  const he = [p.firstNameHebrew, p.lastNameHebrew].filter(Boolean).join(' ');
  return (lang === 'he' ? he || en : en || he) || null;
}

export function PaymentView({ p, reload }: { p: Detail; reload(): void }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const canChange = useCan('manager');
  const [dialog, setDialog] = useState<'void' | 'refund' | null>(null);
  const [reason, setReason] = useState('');
  // What may still be refunded: the amount less what was refunded and what is being refunded.
  const pending = p.refunds.filter((r) => r.status === 'pending').reduce((n, r) => n + r.amountMinor, 0);
  const refundable = Math.max(0, p.amountMinor - p.refundedMinor - pending);
  const [refundMinor, setRefundMinor] = useState<number | null>(refundable);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState<string | null>(null);
  // One id per refund dialog: a double click or a retried request replays, never refunds twice.
  const [refundTxId, setRefundTxId] = useState('');
  const [refundProblem, setRefundProblem] = useState<string | null>(null);

  const close = () => {
    setDialog(null);
    setError(null);
    setReason('');
  };
  const act = async (kind: 'void' | 'refund') => {
    setBusy(true);
    setError(null);
    setRefundProblem(null);
    try {
      const path = `/payments/${encodeURIComponent(p.receiptNum)}/${kind}`;
      if (kind === 'void') {
        await api.post(path, { reason });
        setDone(t('payments.voided'));
      } else {
        const r = await api.post<RefundResponse>(path, {
          amountMinor: refundMinor,
          reason,
          uniqueTransactionId: refundTxId,
        });
        if (r.refundStatus === 'Failed') {
          // The gateway refused: the dialog stays open with its message; a new try is a new refund.
          setRefundProblem(t('payments.refundFailed', { message: r.error?.message ?? '' }));
          setRefundTxId(newTransactionId());
          reload();
          return;
        }
        setDone(t(r.refundStatus === 'Pending' ? 'payments.refundPending' : 'payments.refunded'));
      }
      close();
      reload();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const canVoid = canChange && p.status === 'Success' && p.refunds.length === 0;
  const canRefund =
    canChange && (p.status === 'Success' || p.status === 'PartiallyRefunded') && refundable > 0;
  const donor = partyName(p.donor, lang) ?? p.donorName;
  const collector = partyName(p.collector, lang) ?? p.collectorName;

  // Why a void or a refund: asked in both dialogs.
  const reasonField = (
    <Field label={t('payments.reasonText')} value={reason} onChange={setReason} required maxLength={256} />
  );
  return (
    <>
      {done && (
        <p role="status" className="notice ok" data-testid="payment-done">
          {done}
        </p>
      )}
      <dl className="facts">
        <dt>{t('payments.amount')}</dt>
        <dd data-testid="payment-amount">
          <Money minor={p.amountMinor} currency={p.currency} />
        </dd>
        <dt>{t('payments.status')}</dt>
        <dd data-testid="payment-status">{t(`statuses.${p.status}`, { defaultValue: p.status })}</dd>
        <dt>{t('payments.date')}</dt>
        <dd>{formatDateTime(p.createdAt, lang, timeZone)}</dd>
        <dt>{t('payments.method')}</dt>
        <dd>
          {t(`methods.${p.paymentMethod}`, { defaultValue: p.paymentMethod })}
          {p.brand ? ` ${p.brand}` : ''}
          {p.last4Digits ? ` ·${p.last4Digits}` : ''}
        </dd>
        <dt>{t('payments.donor')}</dt>
        <dd>
          {p.isAnonymous ? (
            t('payments.anonymous')
          ) : p.donor ? (
            <a href={hrefTo('donors', p.donor.accountNum)}>
              <bdi>{donor ?? p.donor.accountNum}</bdi>
            </a>
          ) : (
            <bdi>{donor ?? '—'}</bdi>
          )}
        </dd>
        {collector && (
          <>
            <dt>{t('payments.collector')}</dt>
            <dd>
              <bdi>{collector}</bdi>
            </dd>
          </>
        )}
        <dt>{t('payments.campaign')}</dt>
        <dd>
          <bdi>{p.campaign ? (p.campaign.campaignName ?? `#${p.campaign.campaignNumber}`) : '—'}</bdi>
        </dd>
        <dt>{t('payments.gatewayReference')}</dt>
        <dd>
          <code data-testid="gateway-reference">{p.gateway?.gatewayRefNum ?? '—'}</code>
          {p.gateway?.gatewayName ? ` (${p.gateway.gatewayName})` : ''}
        </dd>
        {p.gateway?.errorMessage && (
          <>
            <dt>{t('payments.gatewayError')}</dt>
            <dd>
              <bdi>{p.gateway.errorMessage}</bdi>
            </dd>
          </>
        )}
        {p.scheduleNum !== null && (
          <>
            <dt>{t('payments.schedule')}</dt>
            <dd>
              <a href={hrefTo('schedules', p.scheduleNum)}>#{p.scheduleNum}</a>
              {p.instalment !== null ? ` · ${t('payments.instalment', { n: p.instalment })}` : ''}
            </dd>
          </>
        )}
        {p.voidedAt && (
          <>
            <dt>{t('payments.voidedAt')}</dt>
            <dd>
              {formatDateTime(p.voidedAt, lang, timeZone)}
              {p.voidReason ? ` · ${p.voidReason}` : ''}
            </dd>
          </>
        )}
        {p.note && (
          <>
            <dt>{t('payments.note')}</dt>
            <dd>
              <bdi>{p.note}</bdi>
            </dd>
          </>
        )}
      </dl>

      {(canVoid || canRefund) && (
        <div className="actions">
          {canVoid && (
            <button
              type="button"
              className="danger"
              onClick={() => setDialog('void')}
              data-testid="void-button"
            >
              {t('payments.void')}
            </button>
          )}
          {canRefund && (
            <button
              type="button"
              onClick={() => {
                setRefundTxId(newTransactionId());
                setRefundProblem(null);
                setDialog('refund');
              }}
              data-testid="refund-button"
            >
              {t('payments.refund')}
            </button>
          )}
        </div>
      )}

      {p.reasons.length > 0 && (
        <section aria-labelledby="split-title">
          <h2 id="split-title">{t('payments.split')}</h2>
          <RecordTable
            rows={p.reasons}
            rowKey={(r) => r.reasonNumber}
            columns={[
              {
                header: t('payments.reason'),
                cell: (r) => (
                  <bdi>
                    {(lang === 'he'
                      ? r.reasonNameHebrew || r.reasonName
                      : r.reasonName || r.reasonNameHebrew) ?? `#${r.reasonNumber}`}
                  </bdi>
                ),
              },
              {
                header: t('payments.amount'),
                cell: (r) => <Money minor={r.amountMinor} currency={p.currency} />,
              },
            ]}
          />
        </section>
      )}

      <section aria-labelledby="device-title">
        <h2 id="device-title">{t('payments.deviceFacts')}</h2>
        {p.device ? (
          <dl className="facts">
            <dt>{t('devices.name')}</dt>
            <dd>
              <bdi>{p.device.deviceName ?? p.deviceName ?? p.deviceId ?? '—'}</bdi>
            </dd>
            <dt>{t('devices.location')}</dt>
            <dd>
              <bdi>{p.device.location?.locationName ?? '—'}</bdi>
              {p.device.location?.latitude
                ? ` (${p.device.location.latitude}, ${p.device.location.longitude})`
                : ''}
            </dd>
            <dt>{t('payments.deviceTime')}</dt>
            <dd>
              {p.device.deviceCreatedDate ?? '—'}
              {p.device.timezone ? ` (${p.device.timezone})` : ''}
            </dd>
          </dl>
        ) : (
          <Empty>{t('payments.source', { source: t(`sources.${p.source ?? 'external'}`) })}</Empty>
        )}
      </section>

      <section aria-labelledby="refunds-title">
        <h2 id="refunds-title">{t('payments.refunds')}</h2>
        {p.refundedMinor > 0 && (
          <p data-testid="refunded-total">
            {t('payments.refundedTotal')} <Money minor={p.refundedMinor} currency={p.currency} />
          </p>
        )}
        {p.refunds.length === 0 ? (
          <Empty>{t('payments.noRefunds')}</Empty>
        ) : (
          <RecordTable
            rows={p.refunds}
            rowKey={(r) => r.refundId}
            columns={[
              { header: t('payments.date'), cell: (r) => formatDateTime(r.createdAt, lang, timeZone) },
              {
                header: t('payments.amount'),
                cell: (r) => <Money minor={r.amountMinor} currency={p.currency} />,
              },
              { header: t('payments.reasonText'), cell: (r) => <bdi>{r.reason ?? ''}</bdi> },
              {
                header: t('payments.status'),
                cell: (r) => (
                  <>
                    {t(`refundStatuses.${r.status}`, { defaultValue: r.status })}
                    {r.errorMessage ? ` · ${r.errorMessage}` : ''}
                  </>
                ),
              },
            ]}
          />
        )}
      </section>

      <section aria-labelledby="deliveries-title">
        <h2 id="deliveries-title">{t('payments.deliveries')}</h2>
        {p.webhooks.length === 0 ? (
          <Empty>{t('payments.noDeliveries')}</Empty>
        ) : (
          <div className="table-wrap">
            <RecordTable
              testId="payment-deliveries"
              rows={p.webhooks}
              rowKey={(d) => d.eventId}
              rowTestId={(d) => `delivery-${d.eventType}`}
              columns={[
                {
                  header: t('integrations.event'),
                  cell: (d) => t(`events.${d.eventType}`, { defaultValue: d.eventType }),
                },
                { header: t('integrations.endpoint'), cell: (d) => <bdi className="url">{d.url}</bdi> },
                {
                  header: t('integrations.deliveryStatus'),
                  testId: 'delivery-status',
                  cell: (d) => (
                    <>
                      {t(`deliveryStatuses.${d.status}`, { defaultValue: d.status })}
                      {d.lastStatusCode ? ` (${d.lastStatusCode})` : ''}
                    </>
                  ),
                },
                { header: t('integrations.attempts'), cell: (d) => d.attempts },
                {
                  header: t('payments.date'),
                  cell: (d) => formatDateTime(d.deliveredAt ?? d.createdAt, lang, timeZone),
                },
              ]}
            />
          </div>
        )}
      </section>

      {dialog === 'void' && (
        <ConfirmDialog
          title={t('payments.voidTitle', { receiptNum: p.receiptNum })}
          message={t('payments.voidConfirm')}
          confirmLabel={t('payments.void')}
          danger
          busy={busy}
          onClose={close}
          onConfirm={() => void act('void')}
          error={<ErrorNotice error={error} />}
          testId="void-dialog"
        >
          {reasonField}
        </ConfirmDialog>
      )}
      {dialog === 'refund' && (
        <ConfirmDialog
          title={t('payments.refundTitle', { receiptNum: p.receiptNum })}
          message={
            <>
              {t('payments.refundable')} <Money minor={refundable} currency={p.currency} />
            </>
          }
          confirmLabel={t('payments.refund')}
          danger
          busy={busy || refundMinor === null || refundMinor <= 0}
          onClose={close}
          onConfirm={() => void act('refund')}
          error={
            <>
              <ErrorNotice error={error} />
              {refundProblem && (
                <p role="alert" className="notice error">
                  {refundProblem}
                </p>
              )}
            </>
          }
          testId="refund-dialog"
        >
          <MoneyInput
            label={t('payments.refundAmount')}
            currency={p.currency}
            initialMinor={refundable}
            maxMinor={refundable}
            onChange={setRefundMinor}
          />
          {reasonField}
        </ConfirmDialog>
      )}
    </>
  );
}
