/** Collectors, campaigns and reasons: the lists, and a manager's edits of names. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Campaign, CollectorRow, Reason } from '../api/types.ts';
import { Dialog } from '../components/dialog.tsx';
import { Field } from '../components/field.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

interface Editing {
  title: string;
  path: string;
  fields: Array<{ key: string; label: string; value: string; lang?: string }>;
  base: Record<string, unknown>;
}

export default function Catalog() {
  const { t } = useTranslation();
  const { api } = useConsole();
  const canChange = useCan('manager');
  const campaigns = useLoad(() => api.get<{ campaigns: Campaign[] }>('/campaigns'), []);
  const reasons = useLoad(() => api.get<{ reasons: Reason[] }>('/reasons'), []);
  const collectors = useLoad(() => api.get<{ collectors: CollectorRow[] }>('/collectors'), []);
  const [editing, setEditing] = useState<Editing | null>(null);
  const editButton = (e: Editing) =>
    canChange && (
      <button
        type="button"
        className="link-button"
        onClick={() => setEditing(e)}
        aria-label={`${t('common.edit')} ${e.title}`}
      >
        {t('common.edit')}
      </button>
    );

  return (
    <>
      <h1 tabIndex={-1}>{t('catalog.title')}</h1>
      <section aria-labelledby="campaigns-title" className="card">
        <h2 id="campaigns-title">{t('catalog.campaigns')}</h2>
        <Loaded state={campaigns}>
          {({ campaigns: list }) =>
            list.length === 0 ? (
              <Empty>{t('catalog.none')}</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">{t('catalog.name')}</th>
                    <th scope="col">{t('catalog.friendlyName')}</th>
                    {canChange && <th scope="col">{t('common.actions')}</th>}
                  </tr>
                </thead>
                <tbody>
                  {list.map((c) => (
                    <tr key={c.campaignNumber}>
                      <td>{c.campaignNumber}</td>
                      <td>
                        <bdi>{c.campaignName ?? '—'}</bdi>
                      </td>
                      <td>
                        <bdi>{c.campaignFriendlyName ?? ''}</bdi>
                      </td>
                      {canChange && (
                        <td>
                          {editButton({
                            title: c.campaignName ?? `#${c.campaignNumber}`,
                            path: `/campaigns/${c.campaignNumber}`,
                            base: {},
                            fields: [
                              { key: 'campaignName', label: t('catalog.name'), value: c.campaignName ?? '' },
                              {
                                key: 'campaignFriendlyName',
                                label: t('catalog.friendlyName'),
                                value: c.campaignFriendlyName ?? '',
                              },
                            ],
                          })}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="reasons-title" className="card">
        <h2 id="reasons-title">{t('catalog.reasons')}</h2>
        <Loaded state={reasons}>
          {({ reasons: list }) =>
            list.length === 0 ? (
              <Empty>{t('catalog.none')}</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">#</th>
                    <th scope="col">{t('catalog.name')}</th>
                    <th scope="col">{t('catalog.nameHebrew')}</th>
                    {canChange && <th scope="col">{t('common.actions')}</th>}
                  </tr>
                </thead>
                <tbody>
                  {list.map((r) => (
                    <tr key={r.reasonNumber}>
                      <td>{r.reasonNumber}</td>
                      <td>
                        <bdi>{r.reasonName ?? '—'}</bdi>
                      </td>
                      <td>
                        <bdi lang="he">{r.reasonNameHebrew ?? ''}</bdi>
                      </td>
                      {canChange && (
                        <td>
                          {editButton({
                            title: r.reasonName ?? `#${r.reasonNumber}`,
                            path: `/reasons/${r.reasonNumber}`,
                            base: { campaignNum: r.campaignNum },
                            fields: [
                              { key: 'reasonName', label: t('catalog.name'), value: r.reasonName ?? '' },
                              {
                                key: 'reasonNameHebrew',
                                label: t('catalog.nameHebrew'),
                                value: r.reasonNameHebrew ?? '',
                                lang: 'he',
                              },
                            ],
                          })}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      <section aria-labelledby="collectors-title" className="card">
        <h2 id="collectors-title">{t('catalog.collectors')}</h2>
        <Loaded state={collectors}>
          {({ collectors: list }) =>
            list.length === 0 ? (
              <Empty>{t('catalog.none')}</Empty>
            ) : (
              <table>
                <thead>
                  <tr>
                    <th scope="col">{t('donors.account')}</th>
                    <th scope="col">{t('catalog.name')}</th>
                    <th scope="col">{t('catalog.nameHebrew')}</th>
                    {canChange && <th scope="col">{t('common.actions')}</th>}
                  </tr>
                </thead>
                <tbody>
                  {list.map((c) => (
                    <tr key={c.collectorId}>
                      <td>{c.collectorId}</td>
                      <td>
                        <bdi>{[c.firstName, c.lastName].filter(Boolean).join(' ') || '—'}</bdi>
                      </td>
                      <td>
                        <bdi lang="he">{[c.firstNameHebrew, c.lastNameHebrew].filter(Boolean).join(' ')}</bdi>
                      </td>
                      {canChange && (
                        <td>
                          {editButton({
                            title: c.collectorId,
                            path: `/collectors/${encodeURIComponent(c.collectorId)}`,
                            base: {},
                            fields: [
                              { key: 'firstName', label: t('donors.firstName'), value: c.firstName ?? '' },
                              { key: 'lastName', label: t('donors.lastName'), value: c.lastName ?? '' },
                              {
                                key: 'firstNameHebrew',
                                label: t('donors.firstNameHebrew'),
                                value: c.firstNameHebrew ?? '',
                                lang: 'he',
                              },
                              {
                                key: 'lastNameHebrew',
                                label: t('donors.lastNameHebrew'),
                                value: c.lastNameHebrew ?? '',
                                lang: 'he',
                              },
                            ],
                          })}
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            )
          }
        </Loaded>
      </section>
      {editing && (
        <EditDialog
          editing={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            campaigns.reload();
            reasons.reload();
            collectors.reload();
          }}
        />
      )}
    </>
  );
}

function EditDialog({ editing, onClose, onSaved }: { editing: Editing; onClose(): void; onSaved(): void }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [values, setValues] = useState(() => Object.fromEntries(editing.fields.map((f) => [f.key, f.value])));
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog title={`${t('common.edit')}: ${editing.title}`} onClose={onClose}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await api.put(editing.path, { ...editing.base, ...values });
            onSaved();
          } catch (err) {
            setError(err);
          }
        }}
      >
        {editing.fields.map((f) => (
          <Field
            key={f.key}
            label={f.label}
            value={values[f.key] ?? ''}
            lang={f.lang}
            dir={f.lang === 'he' ? 'rtl' : undefined}
            onChange={(v) => setValues((o) => ({ ...o, [f.key]: v }))}
          />
        ))}
        <ErrorNotice error={error} />
        <div className="actions">
          <button type="submit" className="primary">
            {t('common.save')}
          </button>
          <button type="button" onClick={onClose}>
            {t('common.cancel')}
          </button>
        </div>
      </form>
    </Dialog>
  );
}
