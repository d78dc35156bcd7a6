/** Donor: search the offline cache, create one quickly (English or Hebrew names), or anonymous. */
import type { RefPerson } from '@kupah/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { donorErrors } from '../forms/validate.ts';
import { emptyDonor, useTerminal } from '../store/terminal-store.ts';

export const personName = (p: RefPerson, lang: string): string => {
  const he = [p.firstNameHebrew, p.lastNameHebrew].filter(Boolean).join(' ');
  const en = [p.firstName, p.lastName].filter(Boolean).join(' ');
  return (lang === 'he' ? he || en : en || he) || p.accountNum;
};

export function DonorScreen() {
  const { t, i18n } = useTranslation();
  const { data } = useServices();
  const { draft, patchDonor, go } = useTerminal();
  const donor = draft.donor;
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<RefPerson[]>([]);
  const [tried, setTried] = useState(false);
  const errors = donorErrors(donor);

  useEffect(() => {
    if (query.trim().length < 2) {
      setFound([]);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      void data.searchDonors(query, 8).then((r) => {
        if (live) setFound(r);
      });
    }, 120);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, data]);

  const valid = Object.keys(errors).length === 0;
  return (
    <section className="screen" data-testid="donor-screen">
      <h1>{t('donor.title')}</h1>
      {donor.mode === 'existing' && donor.existing ? (
        <p data-testid="donor-selected">
          {t('donor.selected', { name: personName(donor.existing, i18n.language) })}{' '}
          <button type="button" onClick={() => patchDonor(emptyDonor())}>
            {t('donor.change')}
          </button>
        </p>
      ) : donor.mode === 'new' ? (
        <fieldset>
          <legend>{t('donor.create')}</legend>
          <div className="row">
            <Field
              label={t('donor.firstNameHebrew')}
              value={donor.firstNameHebrew}
              onChange={(v) => patchDonor({ firstNameHebrew: v })}
              dir="rtl"
              testId="donor-first-he"
            />
            <Field
              label={t('donor.lastNameHebrew')}
              value={donor.lastNameHebrew}
              onChange={(v) => patchDonor({ lastNameHebrew: v })}
              dir="rtl"
              testId="donor-last-he"
            />
          </div>
          <div className="row">
            <Field
              label={t('donor.firstName')}
              value={donor.firstName}
              onChange={(v) => patchDonor({ firstName: v })}
              dir="ltr"
              testId="donor-first"
            />
            <Field
              label={t('donor.lastName')}
              value={donor.lastName}
              onChange={(v) => patchDonor({ lastName: v })}
              dir="ltr"
              testId="donor-last"
            />
          </div>
          {tried && errors.name ? (
            <p className="field-error" role="alert" data-testid="donor-name-error">
              {t(errors.name.key)}
            </p>
          ) : null}
          <div className="row">
            <Field
              label={t('donor.phone')}
              value={donor.phone}
              onChange={(v) => patchDonor({ phone: v })}
              type="tel"
              dir="ltr"
              testId="donor-phone"
            />
            <Field
              label={t('donor.email')}
              value={donor.email}
              onChange={(v) => patchDonor({ email: v })}
              type="email"
              dir="ltr"
              error={errors.email}
              testId="donor-email"
            />
          </div>
        </fieldset>
      ) : (
        <>
          <Field label={t('donor.search')} value={query} onChange={setQuery} testId="donor-search" />
          <ul className="results" data-testid="donor-results">
            {found.map((p) => (
              <li key={p.accountNum}>
                <button type="button" onClick={() => patchDonor({ mode: 'existing', existing: p })}>
                  {personName(p, i18n.language)} · {p.accountNum} {p.phones[0] ?? ''}
                </button>
              </li>
            ))}
          </ul>
          {query.trim().length >= 2 && found.length === 0 ? (
            <p className="muted">{t('donor.noMatch')}</p>
          ) : null}
          <div className="row">
            <button type="button" data-testid="donor-new" onClick={() => patchDonor({ mode: 'new' })}>
              {t('donor.create')}
            </button>
            <button
              type="button"
              data-testid="donor-anonymous"
              aria-pressed={donor.mode === 'anonymous'}
              onClick={() => patchDonor({ mode: donor.mode === 'anonymous' ? 'none' : 'anonymous' })}
            >
              {t('donor.anonymous')}
            </button>
          </div>
        </>
      )}
      <div className="actions">
        <button type="button" onClick={() => go('method')}>
          {t('nav.back')}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="donor-next"
          aria-disabled={!valid}
          onClick={() => {
            setTried(true);
            if (valid) go('details');
          }}
        >
          {t('nav.next')}
        </button>
      </div>
    </section>
  );
}
