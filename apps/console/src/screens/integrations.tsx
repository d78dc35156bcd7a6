/**
 * Integrations: API keys and sources (created and shown once, revoked) for the owner; webhook
 * endpoints, their deliveries and attempts, replay and secret rotation; the gateway (key masked).
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Attempt, Credential, Delivery, Integrations as IntegrationsAnswer } from '../api/types.ts';
import { ConfirmDialog, Dialog } from '../components/dialog.tsx';
import { Checkbox, Field, Select } from '../components/field.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { RecordTable } from '../components/record-table.tsx';
import { SecretShownOnce } from '../components/secret-shown-once.tsx';
import { formatDateTime } from '../format/dates.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const KINDS = ['payment', 'schedule', 'void'] as const;
const PROVIDERS = ['sola', 'none'];

export default function Integrations() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const isOwner = useCan('owner');
  const state = useLoad(() => api.get<IntegrationsAnswer>('/integrations'), []);
  const [secret, setSecret] = useState<{ label: string; value: string; note?: string } | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [confirm, setConfirm] = useState<{ title: string; run(): Promise<void> } | null>(null);
  const [creating, setCreating] = useState<'api-keys' | 'sources' | null>(null);
  const [webhook, setWebhook] = useState<{ kind: string; url: string } | null>(null);
  const [gateway, setGateway] = useState(false);

  const dated = (iso: string | null | undefined) => (iso ? formatDateTime(iso, lang, timeZone) : '—');
  const credentialTable = (what: 'api-keys' | 'sources', rows: Credential[]) =>
    rows.length === 0 ? (
      <Empty>{t('integrations.noneYet')}</Empty>
    ) : (
      <RecordTable
        rows={rows}
        rowKey={(r) => r.id}
        columns={[
          {
            header: t('integrations.name'),
            cell: (r) => (
              <>
                <bdi>{r.name ?? '—'}</bdi>
                {r.sandbox ? ` (${t('devices.sandbox')})` : ''}
              </>
            ),
          },
          { header: t('integrations.masked'), cell: (r) => <code dir="ltr">{r.masked}</code> },
          { header: t('integrations.created'), cell: (r) => dated(r.createdAt) },
          {
            header: t('devices.status'),
            cell: (r) => (r.revokedAt ? t('integrations.revoked') : t('integrations.active')),
          },
          {
            header: t('common.actions'),
            hidden: !isOwner,
            cell: (r) =>
              !r.revokedAt && (
                <button
                  type="button"
                  className="link-button danger-text"
                  aria-label={`${t('integrations.revoke')} ${r.masked}`}
                  onClick={() =>
                    setConfirm({
                      title: t('integrations.revokeTitle', { name: r.name ?? r.masked }),
                      run: async () => {
                        await api.post(`/${what}/${r.id}/revoke`, {});
                      },
                    })
                  }
                >
                  {t('integrations.revoke')}
                </button>
              ),
          },
        ]}
      />
    );

  return (
    <>
      <h1 tabIndex={-1}>{t('integrations.title')}</h1>
      <Loaded state={state}>
        {(d) => (
          <>
            {isOwner && (
              <>
                <section aria-labelledby="keys-title" className="card">
                  <h2 id="keys-title">{t('integrations.apiKeys')}</h2>
                  {credentialTable('api-keys', d.apiKeys)}
                  <button type="button" onClick={() => setCreating('api-keys')}>
                    {t('integrations.newApiKey')}
                  </button>
                </section>
                <section aria-labelledby="sources-title" className="card">
                  <h2 id="sources-title">{t('integrations.sources')}</h2>
                  {credentialTable('sources', d.sources)}
                  <button type="button" onClick={() => setCreating('sources')}>
                    {t('integrations.newSource')}
                  </button>
                </section>
              </>
            )}
            <section aria-labelledby="webhooks-title" className="card">
              <h2 id="webhooks-title">{t('integrations.webhooks')}</h2>
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('integrations.kind')}</th>
                    <th scope="col">{t('integrations.endpoint')}</th>
                    <th scope="col">{t('common.actions')}</th>
                  </tr>
                </thead>
                <tbody>
                  {KINDS.map((kind) => {
                    const w = d.webhooks.find((x) => x.kind === kind);
                    return (
                      <tr key={kind}>
                        <td>{t(`events.${kind}`)}</td>
                        <td>
                          {w ? <bdi className="url">{w.url}</bdi> : '—'}
                          {w?.disabled ? ` (${t('integrations.disabled')})` : ''}
                        </td>
                        <td className="row-actions">
                          <button
                            type="button"
                            className="link-button"
                            onClick={() => setWebhook({ kind, url: w?.url ?? '' })}
                          >
                            {t('common.edit')}
                          </button>
                          {w && (
                            <button
                              type="button"
                              className="link-button"
                              onClick={() =>
                                setConfirm({
                                  title: t('integrations.rotateTitle', { kind: t(`events.${kind}`) }),
                                  run: async () => {
                                    const r = await api.post<{
                                      secret: string;
                                      previousSecretValidUntil?: string;
                                    }>(`/webhooks/${kind}/rotate`, {});
                                    const until = r.previousSecretValidUntil;
                                    setSecret({
                                      label: t('integrations.newSecret'),
                                      value: r.secret,
                                      ...(until
                                        ? {
                                            note: t('integrations.previousValid', {
                                              time: formatDateTime(until, lang, timeZone),
                                            }),
                                          }
                                        : {}),
                                    });
                                  },
                                })
                              }
                            >
                              {t('integrations.rotate')}
                            </button>
                          )}
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </section>
            <Deliveries />
            <section aria-labelledby="gateway-title" className="card">
              <h2 id="gateway-title">{t('integrations.gateway')}</h2>
              <dl className="facts">
                <dt>{t('integrations.provider')}</dt>
                <dd data-testid="gateway-provider">
                  {d.gateway.provider ?? t('integrations.sandboxDefault')}
                </dd>
                <dt>{t('integrations.key')}</dt>
                <dd>
                  <code dir="ltr">{d.gateway.keyLast4 ? `••••••••${d.gateway.keyLast4}` : '—'}</code>
                </dd>
                {d.gateway.url && (
                  <>
                    <dt>{t('integrations.url')}</dt>
                    <dd>
                      <bdi className="url">{d.gateway.url}</bdi>
                    </dd>
                  </>
                )}
              </dl>
              {isOwner && (
                <button type="button" onClick={() => setGateway(true)}>
                  {t('integrations.changeGateway')}
                </button>
              )}
            </section>
          </>
        )}
      </Loaded>
      {creating && (
        <CreateCredential
          what={creating}
          onClose={() => setCreating(null)}
          onCreated={(value) => {
            setCreating(null);
            setSecret({
              label: t(creating === 'api-keys' ? 'integrations.newApiKey' : 'integrations.newSource'),
              value,
            });
            state.reload();
          }}
        />
      )}
      {webhook && (
        <WebhookDialog
          kind={webhook.kind}
          url={webhook.url}
          onClose={() => setWebhook(null)}
          onSaved={(s) => {
            setWebhook(null);
            if (s) setSecret({ label: t('integrations.newSecret'), value: s });
            state.reload();
          }}
        />
      )}
      {gateway && (
        <GatewayDialog
          onClose={() => setGateway(false)}
          onSaved={() => {
            setGateway(false);
            state.reload();
          }}
        />
      )}
      {confirm && (
        <ConfirmDialog
          title={confirm.title}
          confirmLabel={t('common.confirm')}
          danger
          onClose={() => {
            setConfirm(null);
            setError(null);
          }}
          onConfirm={async () => {
            try {
              await confirm.run();
              setConfirm(null);
              state.reload();
            } catch (e) {
              setError(e);
            }
          }}
          error={<ErrorNotice error={error} />}
        />
      )}
      {secret && (
        <SecretShownOnce
          title={secret.label}
          warning={t('integrations.shownOnce')}
          value={secret.value}
          note={secret.note}
          testId="shown-once"
          valueTestId="secret-value"
          onClose={() => setSecret(null)}
        />
      )}
    </>
  );
}

function CreateCredential({
  what,
  onClose,
  onCreated,
}: {
  what: 'api-keys' | 'sources';
  onClose(): void;
  onCreated(value: string): void;
}) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [name, setName] = useState('');
  const [sandbox, setSandbox] = useState(false);
  return (
    <FormDialog
      title={t(what === 'api-keys' ? 'integrations.newApiKey' : 'integrations.newSource')}
      onClose={onClose}
      submitLabel={t('common.create')}
      onSubmit={async () => {
        const r = await api.post<{ apiKey?: string; sourceGuid?: string }>(`/${what}`, { name, sandbox });
        onCreated(r.apiKey ?? r.sourceGuid ?? '');
      }}
    >
      <Field label={t('integrations.name')} value={name} onChange={setName} required={what === 'sources'} />
      <Checkbox label={t('integrations.sandbox')} checked={sandbox} onChange={setSandbox} />
    </FormDialog>
  );
}

function WebhookDialog({
  kind,
  url: initial,
  onClose,
  onSaved,
}: {
  kind: string;
  url: string;
  onClose(): void;
  onSaved(secret: string | undefined): void;
}) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [url, setUrl] = useState(initial);
  return (
    <FormDialog
      title={t('integrations.webhookTitle', { kind: t(`events.${kind}`) })}
      onClose={onClose}
      onSubmit={async () => {
        const r = await api.put<{ secret?: string }>(`/webhooks/${kind}`, { url: url || null });
        onSaved(r?.secret);
      }}
    >
      <Field
        label={t('integrations.url')}
        type="url"
        value={url}
        onChange={setUrl}
        dir="ltr"
        hint={t('integrations.urlHint')}
      />
    </FormDialog>
  );
}

function GatewayDialog({ onClose, onSaved }: { onClose(): void; onSaved(): void }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [provider, setProvider] = useState('sola');
  const [key, setKey] = useState('');
  const [url, setUrl] = useState('');
  return (
    <FormDialog
      title={t('integrations.changeGateway')}
      onClose={onClose}
      onSubmit={async () => {
        await api.put('/gateway', provider === 'none' ? { provider } : { provider, key, url: url || null });
        onSaved();
      }}
    >
      <Select
        label={t('integrations.provider')}
        value={provider}
        onChange={setProvider}
        options={PROVIDERS.map((p) => ({ value: p, label: p }))}
      />
      {provider !== 'none' && (
        <>
          <Field
            label={t('integrations.key')}
            type="password"
            autoComplete="off"
            value={key}
            onChange={setKey}
            required
          />
          <Field label={t('integrations.url')} type="url" value={url} onChange={setUrl} dir="ltr" />
        </>
      )}
    </FormDialog>
  );
}

function Deliveries() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const [status, setStatus] = useState('');
  const state = useLoad(() => api.get<{ deliveries: Delivery[] }>('/deliveries', { status }), [status]);
  const [attemptsOf, setAttemptsOf] = useState<Delivery | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [replayed, setReplayed] = useState<number | null>(null);
  return (
    <section aria-labelledby="deliveries-title" className="card">
      <h2 id="deliveries-title">{t('integrations.deliveries')}</h2>
      <div className="filters">
        <Select
          label={t('integrations.deliveryStatus')}
          value={status}
          onChange={setStatus}
          options={['', 'pending', 'delivered', 'dead'].map((s) => ({
            value: s,
            label: s ? t(`deliveryStatuses.${s}`) : t('common.any'),
          }))}
        />
      </div>
      <ErrorNotice error={error} />
      {replayed !== null && (
        <p role="status" className="notice ok">
          {t('integrations.replayed', { id: replayed })}
        </p>
      )}
      <Loaded state={state}>
        {({ deliveries }) =>
          deliveries.length === 0 ? (
            <Empty>{t('integrations.noDeliveries')}</Empty>
          ) : (
            <div className="table-wrap">
              <RecordTable
                testId="deliveries-table"
                rows={deliveries}
                rowKey={(d) => d.id}
                columns={[
                  {
                    header: t('integrations.event'),
                    cell: (d) => t(`events.${d.type}`, { defaultValue: d.type }),
                  },
                  {
                    header: t('integrations.endpoint'),
                    cell: (d) => <bdi className="url">{d.endpoint}</bdi>,
                  },
                  {
                    header: t('integrations.deliveryStatus'),
                    cell: (d) => (
                      <>
                        {t(`deliveryStatuses.${d.status}`, { defaultValue: d.status })}
                        {d.lastStatusCode ? ` (${d.lastStatusCode})` : ''}
                      </>
                    ),
                  },
                  { header: t('integrations.attempts'), cell: (d) => d.attempts },
                  {
                    header: t('integrations.created'),
                    cell: (d) => (d.createdAt ? formatDateTime(d.createdAt, lang, timeZone) : '—'),
                  },
                  {
                    header: t('common.actions'),
                    className: 'row-actions',
                    cell: (d) => (
                      <>
                        <button type="button" className="link-button" onClick={() => setAttemptsOf(d)}>
                          {t('integrations.showAttempts')}
                        </button>
                        <button
                          type="button"
                          className="link-button"
                          onClick={async () => {
                            try {
                              await api.post(`/deliveries/${d.id}/replay`, {});
                              setReplayed(d.id);
                              state.reload();
                            } catch (e) {
                              setError(e);
                            }
                          }}
                        >
                          {t('integrations.replay')}
                        </button>
                      </>
                    ),
                  },
                ]}
              />
            </div>
          )
        }
      </Loaded>
      {attemptsOf && <AttemptsDialog delivery={attemptsOf} onClose={() => setAttemptsOf(null)} />}
    </section>
  );
}

function AttemptsDialog({ delivery, onClose }: { delivery: Delivery; onClose(): void }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { api, timeZone } = useConsole();
  const state = useLoad(
    () => api.get<{ attempts: Attempt[] }>(`/deliveries/${delivery.id}/attempts`),
    [delivery.id],
  );
  return (
    <Dialog title={t('integrations.attemptsTitle', { id: delivery.webhookId })} onClose={onClose}>
      <Loaded state={state}>
        {({ attempts }) =>
          attempts.length === 0 ? (
            <Empty>{t('integrations.noAttempts')}</Empty>
          ) : (
            <RecordTable
              rows={attempts}
              rowKey={(a) => a.attempt}
              columns={[
                { header: '#', cell: (a) => a.attempt },
                { header: t('integrations.when'), cell: (a) => formatDateTime(a.startedAt, lang, timeZone) },
                { header: t('integrations.httpStatus'), cell: (a) => a.statusCode ?? '—' },
                { header: t('integrations.latency'), cell: (a) => t('integrations.ms', { ms: a.latencyMs }) },
                { header: t('integrations.error'), cell: (a) => <bdi>{a.error ?? ''}</bdi> },
              ]}
            />
          )
        }
      </Loaded>
    </Dialog>
  );
}
