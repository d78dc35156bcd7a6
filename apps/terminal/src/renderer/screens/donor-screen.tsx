/**
 * Donor: search the offline cache, create one quickly (English or Hebrew names), or anonymous.
 * At a kiosk there is no search: a donor may only identify themselves by typing their whole phone
 * number or e-mail address (matched by keyed hash), and then sees only their own name.
 */
import type { RefPerson } from '@kupah/contracts';
import { contactQuery } from '@kupah/terminal-core';
import { type FormEvent, type KeyboardEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field, GroupError } from '../components/field.tsx';
import { donorErrors } from '../forms/validate.ts';
import { emptyDonor, useTerminal } from '../store/terminal-store.ts';

/** The name only (never the account number): what a kiosk shows a donor who identified. */
export const nameOnly = (p: RefPerson, lang: string): string => {
  const he = [p.firstNameHebrew, p.lastNameHebrew].filter(Boolean).join(' ');
  const en = [p.firstName, p.lastName].filter(Boolean).join(' ');
  return lang === 'he' ? he || en : en || he;
};

/** A person's name in the current language when there is one (else the other, else the account). */
export const personName = (p: RefPerson, lang: string): string => nameOnly(p, lang) || p.accountNum;

const SEARCH_DELAY_MS = 120;

export function DonorScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data } = useServices();
  const donor = useTerminal((s) => s.draft.donor);
  const kiosk = useTerminal((s) => s.local?.mode === 'kiosk');
  const { patchDonor, next, back } = useTerminal.getState();
  const [query, setQuery] = useState('');
  const [found, setFound] = useState<RefPerson[] | null>(null);
  const errors = donorErrors(donor);
  const valid = Object.keys(errors).length === 0;
  const anyName = !!(donor.firstName || donor.lastName || donor.firstNameHebrew || donor.lastNameHebrew);

  useEffect(() => {
    const q = query.trim();
    // A kiosk never searches as the donor types (see KioskIdentify).
    if (kiosk || q.length < 2) {
      setFound(null);
      return;
    }
    let live = true;
    const timer = setTimeout(() => {
      void data.searchDonors(q, 8).then((r) => {
        if (live) setFound(r);
      });
    }, SEARCH_DELAY_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [query, data, kiosk]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (valid) next();
  };
  /** Enter in the search field picks the first match (with nothing typed it goes on). */
  const onSearchKey = (e: KeyboardEvent<HTMLElement>) => {
    if (e.key !== 'Enter' || query.trim() === '') return;
    e.preventDefault();
    const first = found?.[0];
    if (first) patchDonor({ ...emptyDonor(), mode: 'existing', existing: first });
  };

  const hebrewNames = (
    <div className="row">
      <Field
        label={t('donor.firstNameHebrew')}
        value={donor.firstNameHebrew}
        onChange={(v) => patchDonor({ firstNameHebrew: v })}
        error={errors.firstNameHebrew}
        dir="rtl"
        autoFocus={lang === 'he'}
        maxLength={256}
        testId="donor-first-he"
      />
      <Field
        label={t('donor.lastNameHebrew')}
        value={donor.lastNameHebrew}
        onChange={(v) => patchDonor({ lastNameHebrew: v })}
        error={errors.lastNameHebrew}
        dir="rtl"
        maxLength={256}
        testId="donor-last-he"
      />
    </div>
  );
  const englishNames = (
    <div className="row">
      <Field
        label={t('donor.firstName')}
        value={donor.firstName}
        onChange={(v) => patchDonor({ firstName: v })}
        error={errors.firstName}
        dir="ltr"
        autoFocus={lang !== 'he'}
        maxLength={256}
        testId="donor-first"
      />
      <Field
        label={t('donor.lastName')}
        value={donor.lastName}
        onChange={(v) => patchDonor({ lastName: v })}
        error={errors.lastName}
        dir="ltr"
        maxLength={256}
        testId="donor-last"
      />
    </div>
  );

  return (
    <form className="screen" data-testid="donor-screen" onSubmit={submit} noValidate autoComplete="off">
      <h1 tabIndex={-1}>{t('donor.title')}</h1>
      {kiosk && donor.mode === 'existing' && donor.existing ? (
        <div className="chosen" data-testid="donor-selected">
          <p>{t('kioskDonor.found', { name: nameOnly(donor.existing, lang) })}</p>
          <button type="button" data-testid="donor-change" onClick={() => patchDonor(emptyDonor())}>
            {t('kioskDonor.notMe')}
          </button>
        </div>
      ) : donor.mode === 'existing' && donor.existing ? (
        <div className="chosen" data-testid="donor-selected">
          <p>
            {t('donor.selected', { name: personName(donor.existing, lang) })}{' '}
            <span className="muted" dir="ltr">
              {donor.existing.accountNum}
            </span>
          </p>
          <button type="button" data-testid="donor-change" onClick={() => patchDonor(emptyDonor())}>
            {t('donor.change')}
          </button>
        </div>
      ) : donor.mode === 'new' ? (
        <fieldset data-testid="donor-new-form">
          <legend>{t('donor.create')}</legend>
          <p className="muted">{t('donor.namePairHint')}</p>
          {lang === 'he' ? (
            <>
              {hebrewNames}
              {englishNames}
            </>
          ) : (
            <>
              {englishNames}
              {hebrewNames}
            </>
          )}
          {anyName ? <GroupError message={errors.name} testId="donor-name-error" /> : null}
          <div className="row">
            <Field
              label={t('donor.phone')}
              value={donor.phone}
              onChange={(v) => patchDonor({ phone: v })}
              error={errors.phone}
              type="tel"
              inputMode="tel"
              dir="ltr"
              maxLength={32}
              testId="donor-phone"
            />
            <Field
              label={t('donor.email')}
              value={donor.email}
              onChange={(v) => patchDonor({ email: v })}
              type="email"
              inputMode="email"
              dir="ltr"
              error={errors.email}
              maxLength={256}
              testId="donor-email"
            />
          </div>
          <button type="button" data-testid="donor-cancel-new" onClick={() => patchDonor(emptyDonor())}>
            {t('donor.backToSearch')}
          </button>
        </fieldset>
      ) : kiosk ? (
        <KioskIdentify />
      ) : (
        <>
          <Field
            label={t('donor.search')}
            value={query}
            onChange={setQuery}
            onKeyDown={onSearchKey}
            autoFocus
            testId="donor-search"
            maxLength={100}
          />
          <ul className="results" data-testid="donor-results" aria-label={t('donor.results')}>
            {(found ?? []).map((p) => (
              <li key={p.accountNum}>
                <button
                  type="button"
                  data-testid="donor-result"
                  onClick={() => patchDonor({ ...emptyDonor(), mode: 'existing', existing: p })}
                >
                  <span className="result-name">{personName(p, lang)}</span>{' '}
                  <span className="muted" dir="ltr">
                    {[p.accountNum, p.phones[0], p.emails[0]].filter(Boolean).join(' · ')}
                  </span>
                </button>
              </li>
            ))}
          </ul>
          {found !== null && found.length === 0 ? (
            <p className="muted" aria-live="polite" data-testid="donor-no-match">
              {t('donor.noMatch')}
            </p>
          ) : null}
          <NewOrAnonymous />
        </>
      )}
      <div className="actions">
        <button type="button" onClick={back} data-testid="donor-back">
          {t('nav.back')}
        </button>
        <button type="submit" className="primary" data-primary data-testid="donor-next" disabled={!valid}>
          {t('nav.next')}
        </button>
      </div>
    </form>
  );
}

/**
 * Kiosk: the donor types their whole phone number or e-mail address and asks; exactly one donor
 * with that value (by keyed hash) is chosen, showing only the name. Anything else (a fragment, no
 * match, several donors sharing it) says the same "not found", revealing nothing.
 */
/** A new donor, or anonymous (a toggle): the two ways on without picking a known donor. */
function NewOrAnonymous() {
  const { t } = useTranslation();
  const donor = useTerminal((s) => s.draft.donor);
  const { patchDonor } = useTerminal.getState();
  return (
    <>
      <div className="row">
        <button
          type="button"
          data-testid="donor-new"
          onClick={() => patchDonor({ ...emptyDonor(), mode: 'new' })}
        >
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
      <p className="muted" aria-live="polite">
        {donor.mode === 'anonymous' ? t('donor.anonymousChosen') : t('donor.noneChosen')}
      </p>
    </>
  );
}

function KioskIdentify() {
  const { t } = useTranslation();
  const { data } = useServices();
  const { patchDonor } = useTerminal.getState();
  const [typed, setTyped] = useState('');
  const [notFound, setNotFound] = useState(false);
  const [busy, setBusy] = useState(false);

  async function identify() {
    if (busy || typed.trim() === '') return;
    setNotFound(false);
    // Only a whole phone number or e-mail address is looked up (by hash, never by prefix).
    const contact = contactQuery(typed);
    if (!contact) {
      setNotFound(true);
      return;
    }
    setBusy(true);
    try {
      const found = await data.searchDonors(typed.trim(), 2);
      const only = found.length === 1 ? found[0] : undefined;
      if (only) {
        setTyped('');
        patchDonor({ ...emptyDonor(), mode: 'existing', existing: only });
      } else setNotFound(true);
    } catch {
      setNotFound(true);
    } finally {
      setBusy(false);
    }
  }

  return (
    <>
      <Field
        label={t('kioskDonor.identify')}
        hint={t('kioskDonor.identifyHint')}
        value={typed}
        onChange={(v) => {
          setTyped(v);
          setNotFound(false);
        }}
        onKeyDown={(e) => {
          if (e.key !== 'Enter') return;
          e.preventDefault();
          void identify();
        }}
        autoComplete="off"
        dir="ltr"
        autoFocus
        testId="donor-identify"
        maxLength={100}
      />
      <button
        type="button"
        data-testid="donor-identify-submit"
        disabled={busy}
        onClick={() => void identify()}
      >
        {t('kioskDonor.find')}
      </button>
      {notFound ? (
        <p className="muted" aria-live="polite" data-testid="donor-not-found">
          {t('kioskDonor.notFound')}
        </p>
      ) : null}
      <NewOrAnonymous />
    </>
  );
}
