/** Collectors, campaigns and reasons: the lists, and a manager's edits of names. */
import { type Key, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Campaign, CollectorRow, Reason } from '../api/types.ts';
import { Field } from '../components/field.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { Empty, Loaded } from '../components/notice.tsx';
import { type Column, RecordTable } from '../components/record-table.tsx';
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
  /** The actions column of a list: edit the row's names (for a manager). */
  const editColumn = <T,>(edit: (row: T) => Editing): Column<T> => ({
    header: t('common.actions'),
    hidden: !canChange,
    cell: (row) => {
      const e = edit(row);
      return (
        <button
          type="button"
          className="link-button"
          onClick={() => setEditing(e)}
          aria-label={`${t('common.edit')} ${e.title}`}
        >
          {t('common.edit')}
        </button>
      );
    },
  });

  return (
    <>
      <h1 tabIndex={-1}>{t('catalog.title')}</h1>
      <CatalogSection
        id="campaigns"
        title={t('catalog.campaigns')}
        state={campaigns}
        rows={(d) => d.campaigns}
        rowKey={(c) => c.campaignNumber}
        columns={[
          { header: '#', cell: (c) => c.campaignNumber },
          { header: t('catalog.name'), cell: (c) => <bdi>{c.campaignName ?? '—'}</bdi> },
          { header: t('catalog.friendlyName'), cell: (c) => <bdi>{c.campaignFriendlyName ?? ''}</bdi> },
          editColumn((c: Campaign) => ({
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
          })),
        ]}
      />
      <CatalogSection
        id="reasons"
        title={t('catalog.reasons')}
        state={reasons}
        rows={(d) => d.reasons}
        rowKey={(r) => r.reasonNumber}
        columns={[
          { header: '#', cell: (r) => r.reasonNumber },
          { header: t('catalog.name'), cell: (r) => <bdi>{r.reasonName ?? '—'}</bdi> },
          { header: t('catalog.nameHebrew'), cell: (r) => <bdi lang="he">{r.reasonNameHebrew ?? ''}</bdi> },
          editColumn((r: Reason) => ({
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
          })),
        ]}
      />
      <CatalogSection
        id="collectors"
        title={t('catalog.collectors')}
        state={collectors}
        rows={(d) => d.collectors}
        rowKey={(c) => c.collectorId}
        columns={[
          { header: t('donors.account'), cell: (c) => c.collectorId },
          {
            header: t('catalog.name'),
            cell: (c) => <bdi>{[c.firstName, c.lastName].filter(Boolean).join(' ') || '—'}</bdi>,
          },
          {
            header: t('catalog.nameHebrew'),
            cell: (c) => (
              <bdi lang="he">{[c.firstNameHebrew, c.lastNameHebrew].filter(Boolean).join(' ')}</bdi>
            ),
          },
          editColumn((c: CollectorRow) => ({
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
          })),
        ]}
      />
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

/** One list of the catalog: a card with its heading and a table, or "none". */
function CatalogSection<D, T>({
  id,
  title,
  state,
  rows,
  rowKey,
  columns,
}: {
  id: string;
  title: string;
  state: { data: D | undefined; error: unknown; loading: boolean };
  rows(data: D): T[];
  rowKey(row: T): Key;
  columns: Array<Column<T>>;
}) {
  const { t } = useTranslation();
  return (
    <section aria-labelledby={`${id}-title`} className="card">
      <h2 id={`${id}-title`}>{title}</h2>
      <Loaded state={state}>
        {(data) => {
          const list = rows(data);
          return list.length === 0 ? (
            <Empty>{t('catalog.none')}</Empty>
          ) : (
            <RecordTable rows={list} rowKey={rowKey} columns={columns} />
          );
        }}
      </Loaded>
    </section>
  );
}

function EditDialog({ editing, onClose, onSaved }: { editing: Editing; onClose(): void; onSaved(): void }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [values, setValues] = useState(() => Object.fromEntries(editing.fields.map((f) => [f.key, f.value])));
  return (
    <FormDialog
      title={`${t('common.edit')}: ${editing.title}`}
      onClose={onClose}
      onSubmit={async () => {
        await api.put(editing.path, { ...editing.base, ...values });
        onSaved();
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
    </FormDialog>
  );
}
