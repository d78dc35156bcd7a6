/** Donors: search (English or Hebrew), giving history and yearly totals, edit, merge two donors. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { Donor, DonorDetail } from '../api/types.ts';
import { ConfirmDialog } from '../components/dialog.tsx';
import { Field } from '../components/field.tsx';
import { FormDialog } from '../components/form-dialog.tsx';
import { Money, useLang } from '../components/money.tsx';
import { Empty, ErrorNotice, Loaded } from '../components/notice.tsx';
import { RecordTable } from '../components/record-table.tsx';
import { formatCount, type UiLanguage } from '../format/money.ts';
import { hrefTo, navigate } from '../router.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';
import { PaymentsTable } from './payments.tsx';

export function donorName(d: Donor, lang: UiLanguage): string {
  const en = [d.firstName, d.lastName].filter(Boolean).join(' ');
  const he = [d.firstNameHebrew, d.lastNameHebrew].filter(Boolean).join(' ');
  return (lang === 'he' ? he || en : en || he) || d.donorId;
}

export default function Donors({ accountNum }: { accountNum?: string | undefined }) {
  return accountNum ? <DonorView accountNum={accountNum} /> : <DonorSearch />;
}

function DonorSearch() {
  const { t } = useTranslation();
  const lang = useLang();
  const { api } = useConsole();
  const canChange = useCan('manager');
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  const [merging, setMerging] = useState(false);
  const state = useLoad(() => api.get<{ donors: Donor[]; nextCursor: string | null }>('/donors', { q }), [q]);
  return (
    <>
      <h1 tabIndex={-1}>{t('donors.title')}</h1>
      <search>
        <form
          className="filters"
          onSubmit={(e) => {
            e.preventDefault();
            setQ(text);
          }}
        >
          <Field
            label={t('donors.search')}
            type="search"
            value={text}
            onChange={setText}
            hint={t('donors.searchHint')}
          />
          <div className="actions">
            <button type="submit" className="primary">
              {t('common.search')}
            </button>
            {canChange && (
              <button type="button" onClick={() => setMerging(true)}>
                {t('donors.merge')}
              </button>
            )}
          </div>
        </form>
      </search>
      <Loaded state={state}>
        {({ donors }) =>
          donors.length === 0 ? (
            <Empty>{t('donors.none')}</Empty>
          ) : (
            <div className="table-wrap">
              <RecordTable
                rows={donors}
                rowKey={(d) => d.donorId}
                columns={[
                  {
                    header: t('donors.account'),
                    cell: (d) => (
                      <>
                        <a href={hrefTo('donors', d.donorId)}>{d.donorId}</a>
                        {d.mergedInto ? ` → ${d.mergedInto}` : ''}
                      </>
                    ),
                  },
                  {
                    header: t('donors.name'),
                    cell: (d) => <bdi>{[d.firstName, d.lastName].filter(Boolean).join(' ') || '—'}</bdi>,
                  },
                  {
                    header: t('donors.nameHebrew'),
                    cell: (d) => (
                      <bdi lang="he">
                        {[d.firstNameHebrew, d.lastNameHebrew].filter(Boolean).join(' ') || '—'}
                      </bdi>
                    ),
                  },
                  {
                    header: t('donors.email'),
                    cell: (d) => <bdi>{d.donorEmails[0]?.emailAddress ?? ''}</bdi>,
                  },
                  { header: t('donors.phone'), dir: 'ltr', cell: (d) => d.donorPhones[0]?.phoneNumber ?? '' },
                ]}
              />
            </div>
          )
        }
      </Loaded>
      {merging && (
        <MergeDialog
          lang={lang}
          onClose={() => setMerging(false)}
          onMerged={(keep) => navigate(`donors/${keep}`)}
        />
      )}
    </>
  );
}

function MergeDialog({
  onClose,
  onMerged,
}: {
  lang: UiLanguage;
  onClose(): void;
  onMerged(keep: string): void;
}) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [keep, setKeep] = useState('');
  const [merge, setMerge] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  return (
    <ConfirmDialog
      title={t('donors.mergeTitle')}
      message={t('donors.mergeText')}
      confirmLabel={t('donors.merge')}
      danger
      busy={busy || !keep || !merge || keep === merge}
      onClose={onClose}
      onConfirm={async () => {
        setBusy(true);
        try {
          await api.post('/donors/merge', { keep: keep.trim(), merge: merge.trim() });
          onMerged(keep.trim());
        } catch (e) {
          setError(e);
        } finally {
          setBusy(false);
        }
      }}
      error={<ErrorNotice error={error} />}
    >
      <Field label={t('donors.keep')} value={keep} onChange={setKeep} required />
      <Field label={t('donors.mergeAway')} value={merge} onChange={setMerge} required />
    </ConfirmDialog>
  );
}

function DonorView({ accountNum }: { accountNum: string }) {
  const { t } = useTranslation();
  const lang = useLang();
  const { api } = useConsole();
  const canChange = useCan('manager');
  const [editing, setEditing] = useState(false);
  const state = useLoad(
    () => api.get<DonorDetail>(`/donors/${encodeURIComponent(accountNum)}`),
    [accountNum],
  );
  return (
    <>
      <p>
        <a href={hrefTo('donors')}>{t('donors.back')}</a>
      </p>
      <Loaded state={state}>
        {(d) => (
          <>
            <h1 tabIndex={-1}>
              <bdi>{donorName(d.donor, lang)}</bdi> ({d.donor.donorId})
            </h1>
            {d.mergedInto && (
              <p className="notice">
                {t('donors.mergedInto')} <a href={hrefTo('donors', d.mergedInto)}>{d.mergedInto}</a>
              </p>
            )}
            <dl className="facts">
              <dt>{t('donors.name')}</dt>
              <dd>
                <bdi>
                  {[d.donor.title, d.donor.firstName, d.donor.lastName].filter(Boolean).join(' ') || '—'}
                </bdi>
              </dd>
              <dt>{t('donors.nameHebrew')}</dt>
              <dd>
                <bdi lang="he">
                  {[
                    d.donor.titleHebrew,
                    d.donor.firstNameHebrew,
                    d.donor.lastNameHebrew,
                    d.donor.suffixHebrew,
                  ]
                    .filter(Boolean)
                    .join(' ') || '—'}
                </bdi>
              </dd>
              <dt>{t('donors.email')}</dt>
              <dd>
                <bdi>
                  {d.donor.donorEmails
                    .map((e) => e.emailAddress)
                    .filter(Boolean)
                    .join(', ') || '—'}
                </bdi>
              </dd>
              <dt>{t('donors.phone')}</dt>
              <dd dir="ltr">
                {d.donor.donorPhones
                  .map((p) => p.phoneNumber)
                  .filter(Boolean)
                  .join(', ') || '—'}
              </dd>
              <dt>{t('donors.address')}</dt>
              <dd>
                <bdi>
                  {d.donor.donorAddresses
                    .map((a) =>
                      [a.houseNum, a.streetName, a.unit, a.city, a.state, a.zip].filter(Boolean).join(' '),
                    )
                    .join('; ') || '—'}
                </bdi>
              </dd>
            </dl>
            {canChange && (
              <div className="actions">
                <button type="button" onClick={() => setEditing(true)}>
                  {t('common.edit')}
                </button>
              </div>
            )}
            <section aria-labelledby="yearly-title">
              <h2 id="yearly-title">{t('donors.yearly')}</h2>
              {d.totalsByYear.length === 0 ? (
                <Empty>{t('donors.noGiving')}</Empty>
              ) : (
                <RecordTable
                  rows={d.totalsByYear}
                  rowKey={(y) => `${y.year}-${y.currency}`}
                  columns={[
                    { header: t('donors.year'), cell: (y) => y.year },
                    { header: t('today.count'), cell: (y) => formatCount(y.count, lang) },
                    {
                      header: t('today.amount'),
                      cell: (y) => <Money minor={y.amountMinor} currency={y.currency} />,
                    },
                  ]}
                />
              )}
            </section>
            <section aria-labelledby="history-title">
              <h2 id="history-title">{t('donors.history')}</h2>
              {d.payments.length === 0 ? (
                <Empty>{t('donors.noGiving')}</Empty>
              ) : (
                <PaymentsTable items={d.payments} />
              )}
            </section>
            {editing && (
              <EditDonor
                donor={d.donor}
                onClose={() => setEditing(false)}
                onSaved={() => {
                  setEditing(false);
                  state.reload();
                }}
              />
            )}
          </>
        )}
      </Loaded>
    </>
  );
}

function EditDonor({ donor, onClose, onSaved }: { donor: Donor; onClose(): void; onSaved(): void }) {
  const { t } = useTranslation();
  const { api } = useConsole();
  const [f, setF] = useState({
    firstName: donor.firstName ?? '',
    lastName: donor.lastName ?? '',
    firstNameHebrew: donor.firstNameHebrew ?? '',
    lastNameHebrew: donor.lastNameHebrew ?? '',
    email: donor.donorEmails[0]?.emailAddress ?? '',
    phone: donor.donorPhones[0]?.phoneNumber ?? '',
  });
  const set = (k: keyof typeof f) => (v: string) => setF((o) => ({ ...o, [k]: v }));
  return (
    <FormDialog
      title={t('donors.editTitle', { accountNum: donor.donorId })}
      onClose={onClose}
      onSubmit={async () => {
        await api.put(`/donors/${encodeURIComponent(donor.donorId)}`, {
          firstName: f.firstName,
          lastName: f.lastName,
          firstNameHebrew: f.firstNameHebrew,
          lastNameHebrew: f.lastNameHebrew,
          donorEmails: f.email ? [{ emailAddress: f.email }] : [],
          donorPhones: f.phone ? [{ phoneNumber: f.phone }] : [],
        });
        onSaved();
      }}
    >
      <Field label={t('donors.firstName')} value={f.firstName} onChange={set('firstName')} />
      <Field label={t('donors.lastName')} value={f.lastName} onChange={set('lastName')} />
      <Field
        label={t('donors.firstNameHebrew')}
        value={f.firstNameHebrew}
        onChange={set('firstNameHebrew')}
        lang="he"
        dir="rtl"
      />
      <Field
        label={t('donors.lastNameHebrew')}
        value={f.lastNameHebrew}
        onChange={set('lastNameHebrew')}
        lang="he"
        dir="rtl"
      />
      <Field label={t('donors.email')} type="email" value={f.email} onChange={set('email')} />
      <Field label={t('donors.phone')} type="tel" value={f.phone} onChange={set('phone')} dir="ltr" />
    </FormDialog>
  );
}
