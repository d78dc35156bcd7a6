/**
 * Payment method: a card typed by hand or swiped (the swipe itself is captured by the app: see
 * `forms/swipe-capture.ts`; only brand and last 4 ever reach the screen), ACH, or one of the four
 * charity-card providers.
 */
import { PAYMENT_METHODS, type PaymentMethodId } from '@kupah/contracts';
import { detectBrand, groupCardNumber } from '@kupah/instruments';
import { type FormEvent, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { Field, GroupError } from '../components/field.tsx';
import { methodName } from '../format/method-name.ts';
import { clearSwipe } from '../forms/swipe-capture.ts';
import { achConsentErrors, cvvLength, paymentErrors } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

/** `1` `12` `123` → `1` `12/` `12/3`: the slash comes by itself; backspace over it still works. */
export function typeExpiry(previous: string, typed: string): string {
  const clean = typed.replace(/[^\d/]/g, '');
  if (clean.length < previous.length || /^\d{1,2}\/\d{0,4}$/.test(clean)) return clean;
  const digits = clean.replace(/\D/g, '').slice(0, 6);
  if (digits.length === 2) return `${digits}/`;
  return digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
}

export function MethodScreen() {
  const { t } = useTranslation();
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  const { patchDraft, next, back } = useTerminal.getState();
  const errors = useMemo(
    () => ({ ...paymentErrors(draft, new Date()), ...achConsentErrors(draft) }),
    [draft],
  );
  const valid = Object.keys(errors).length === 0;
  const card = draft.card;
  const digits = card.ccNum.replace(/[\s-]/g, '');
  const brand = /^\d{1,19}$/.test(digits) ? detectBrand(digits) : null;

  const setMethod = (method: PaymentMethodId) => patchDraft({ method });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (valid) next();
  };

  return (
    // No autofill: a kiosk browser must never offer to save one donor's card, or fill it for the next.
    <form className="screen" data-testid="method-screen" onSubmit={submit} noValidate autoComplete="off">
      <h1 tabIndex={-1}>{t('method.title')}</h1>
      <fieldset className="tabs">
        <legend className="visually-hidden">{t('method.title')}</legend>
        {PAYMENT_METHODS.map((m) => (
          <label key={m} className={draft.method === m ? 'tab active' : 'tab'}>
            <input
              type="radio"
              name="method"
              value={m}
              checked={draft.method === m}
              data-testid={`method-${m}`}
              onChange={() => setMethod(m)}
            />
            {methodName(t, m, settings)}
          </label>
        ))}
      </fieldset>

      {draft.method === 'Credit_Card' && draft.swiped ? (
        <div className="swiped" data-testid="swiped" aria-live="polite">
          {draft.swiped.last4 ? (
            <p data-testid="swiped-card">
              {t('method.swiped', {
                brand: draft.swiped.brand || t('method.card'),
                last4: draft.swiped.last4,
              })}
            </p>
          ) : null}
          <GroupError message={errors.swipe} testId="swipe-error" />
          <button
            type="button"
            data-testid="swipe-clear"
            onClick={() => {
              clearSwipe();
              patchDraft({ swiped: null });
            }}
          >
            {t('method.clearSwipe')}
          </button>
        </div>
      ) : null}

      {draft.method === 'Credit_Card' && !draft.swiped ? (
        <>
          <p className="muted swipe-hint">{t('method.swipeHint')}</p>
          <Field
            label={t('method.cardNumber')}
            value={card.ccNum}
            onChange={(v) => patchDraft({ card: { ...card, ccNum: groupCardNumber(v) } })}
            error={errors.ccNum}
            // A wrong length may be a number still being typed: said once the field is left.
            touched={digits.length >= 12 && !errors.ccNum?.key.startsWith('method.errors.cardLength')}
            hint={
              brand ? (
                <span data-testid="card-brand">{t('method.brand', { brand })}</span>
              ) : (
                <span data-testid="card-brand" />
              )
            }
            inputMode="numeric"
            autoComplete="off"
            autoFocus
            dir="ltr"
            testId="card-number"
            maxLength={23}
          />
          <div className="row">
            <Field
              label={t('method.expiry')}
              value={card.expiry}
              onChange={(v) => patchDraft({ card: { ...card, expiry: typeExpiry(card.expiry, v) } })}
              error={errors.expiry}
              touched={card.expiry.length >= 5}
              inputMode="numeric"
              autoComplete="off"
              dir="ltr"
              testId="card-expiry"
              maxLength={7}
            />
            <Field
              label={t('method.cvv')}
              value={card.cvv}
              onChange={(v) => patchDraft({ card: { ...card, cvv: v.replace(/\D/g, '') } })}
              error={errors.cvv}
              touched={card.cvv.length >= cvvLength(card.ccNum)}
              type="password"
              inputMode="numeric"
              autoComplete="off"
              dir="ltr"
              testId="card-cvv"
              maxLength={cvvLength(card.ccNum)}
            />
          </div>
        </>
      ) : null}
      {draft.method === 'Credit_Card' ? (
        <Field
          label={t('method.holder')}
          value={card.holder}
          onChange={(v) => patchDraft({ card: { ...card, holder: v } })}
          error={errors.holder}
          autoComplete="off"
          testId="card-holder"
          maxLength={256}
        />
      ) : null}

      {draft.method === 'ACH' ? (
        <>
          <div className="row">
            <Field
              label={t('method.routing')}
              value={draft.bank.routingNum}
              onChange={(v) =>
                patchDraft({ bank: { ...draft.bank, routingNum: v.replace(/[^\d\s-]/g, '') } })
              }
              error={errors.routingNum}
              touched={draft.bank.routingNum.replace(/\D/g, '').length >= 9}
              inputMode="numeric"
              autoFocus
              dir="ltr"
              testId="ach-routing"
              maxLength={11}
            />
            <Field
              label={t('method.account')}
              value={draft.bank.accountNum}
              onChange={(v) =>
                patchDraft({ bank: { ...draft.bank, accountNum: v.replace(/[^\d\s-]/g, '') } })
              }
              error={errors.accountNum}
              inputMode="numeric"
              dir="ltr"
              testId="ach-account"
              maxLength={21}
            />
            <Field
              label={t('method.accountConfirm')}
              value={draft.bank.accountConfirm}
              onChange={(v) =>
                patchDraft({ bank: { ...draft.bank, accountConfirm: v.replace(/[^\d\s-]/g, '') } })
              }
              error={errors.accountConfirm}
              touched={
                draft.bank.accountConfirm.replace(/\D/g, '').length >=
                draft.bank.accountNum.replace(/\D/g, '').length
              }
              inputMode="numeric"
              autoComplete="off"
              dir="ltr"
              testId="ach-account-confirm"
              maxLength={21}
            />
          </div>
          <div className="row">
            <label className="inline">
              {t('method.accountType')}
              <select
                value={draft.bank.accountType}
                data-testid="ach-type"
                onChange={(e) =>
                  patchDraft({
                    bank: { ...draft.bank, accountType: e.target.value as 'Checking' | 'Savings' },
                  })
                }
              >
                <option value="Checking">{t('method.Checking')}</option>
                <option value="Savings">{t('method.Savings')}</option>
              </select>
            </label>
            <Field
              label={t('method.nameOnAccount')}
              value={draft.bank.holder}
              onChange={(v) => patchDraft({ bank: { ...draft.bank, holder: v } })}
              error={errors.bankHolder}
              testId="ach-holder"
              maxLength={256}
            />
          </div>
          <label className="inline check ach-authorisation">
            <input
              type="checkbox"
              checked={draft.bank.authorised}
              data-testid="ach-authorise"
              onChange={(e) => patchDraft({ bank: { ...draft.bank, authorised: e.target.checked } })}
            />
            <span data-testid="ach-authorisation-text">
              {t('method.achAuthorisation', { org: settings?.orgName ?? '' })}
            </span>
          </label>
        </>
      ) : null}

      {draft.method.startsWith('Provider_') ? (
        <Field
          label={t('method.charityNumber', { provider: methodName(t, draft.method, settings) })}
          value={draft.charity.ccNum}
          onChange={(v) => patchDraft({ charity: { ccNum: v } })}
          error={errors.charity}
          touched={draft.charity.ccNum.replace(/[\s-]/g, '').length >= 8}
          autoFocus
          dir="ltr"
          testId="charity-number"
          maxLength={80}
        />
      ) : null}

      <div className="actions">
        <button type="button" onClick={back} data-testid="method-back">
          {t('nav.back')}
        </button>
        <button type="submit" className="primary" data-primary data-testid="method-next" disabled={!valid}>
          {t('nav.next')}
        </button>
      </div>
    </form>
  );
}
