/** Payment method: card (typed or swiped), ACH, or one of the four charity cards. */
import { PAYMENT_METHODS, type PaymentMethodId } from '@kupah/contracts';
import { detectBrand } from '@kupah/instruments';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Field } from '../components/field.tsx';
import { captureSwipes, clearSwipe } from '../forms/swipe-capture.ts';
import { paymentErrors } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

export function MethodScreen() {
  const { t } = useTranslation();
  const { draft, patchDraft, go } = useTerminal();
  const [tried, setTried] = useState(false);
  const errors = useMemo(() => paymentErrors(draft, new Date()), [draft]);
  const valid = Object.keys(errors).length === 0;

  useEffect(
    () =>
      captureSwipes(window, (r) => {
        const d = useTerminal.getState().draft;
        useTerminal.getState().patchDraft({
          method: 'Credit_Card',
          swiped: { brand: r.brand, last4: r.last4 },
          card: { ...d.card, ccNum: '', cvv: '', expiry: '', holder: r.cardHolderName ?? d.card.holder },
        });
      }),
    [],
  );

  const setMethod = (method: PaymentMethodId) => patchDraft({ method });
  const card = draft.card;
  const brand = detectBrand(card.ccNum.replace(/\D/g, ''));
  return (
    <section className="screen" data-testid="method-screen">
      <h1>{t('method.title')}</h1>
      <div className="tabs" role="radiogroup" aria-label={t('method.title')}>
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
            {t(`method.${m}`)}
          </label>
        ))}
      </div>
      {draft.method === 'Credit_Card' ? (
        draft.swiped ? (
          <div className="swiped" data-testid="swiped">
            <p>{t('method.swiped', draft.swiped)}</p>
            <button
              type="button"
              onClick={() => {
                clearSwipe();
                patchDraft({ swiped: null });
              }}
            >
              {t('method.clearSwipe')}
            </button>
          </div>
        ) : (
          <>
            <Field
              label={`${t('method.cardNumber')}${brand ? ` · ${brand}` : ''}`}
              value={card.ccNum}
              onChange={(v) => patchDraft({ card: { ...card, ccNum: v } })}
              error={errors.ccNum}
              touched={tried || card.ccNum.length >= 12}
              inputMode="numeric"
              autoComplete="cc-number"
              dir="ltr"
              testId="card-number"
              maxLength={23}
            />
            <div className="row">
              <Field
                label={t('method.expiry')}
                value={card.expiry}
                onChange={(v) => patchDraft({ card: { ...card, expiry: v } })}
                error={errors.expiry}
                touched={tried || card.expiry.length >= 4}
                inputMode="numeric"
                autoComplete="cc-exp"
                dir="ltr"
                testId="card-expiry"
                maxLength={7}
              />
              <Field
                label={t('method.cvv')}
                value={card.cvv}
                onChange={(v) => patchDraft({ card: { ...card, cvv: v } })}
                error={errors.cvv}
                touched={tried || card.cvv.length >= 3}
                type="password"
                inputMode="numeric"
                autoComplete="cc-csc"
                dir="ltr"
                testId="card-cvv"
                maxLength={4}
              />
            </div>
            <p className="muted">{t('method.swipeHint')}</p>
          </>
        )
      ) : null}
      {draft.method === 'Credit_Card' ? (
        <Field
          label={t('method.holder')}
          value={card.holder}
          onChange={(v) => patchDraft({ card: { ...card, holder: v } })}
          autoComplete="cc-name"
        />
      ) : null}
      {draft.method === 'ACH' ? (
        <>
          <Field
            label={t('method.routing')}
            value={draft.bank.routingNum}
            onChange={(v) => patchDraft({ bank: { ...draft.bank, routingNum: v } })}
            error={errors.routingNum}
            touched={tried || draft.bank.routingNum.length >= 9}
            inputMode="numeric"
            dir="ltr"
            testId="ach-routing"
            maxLength={11}
          />
          <Field
            label={t('method.account')}
            value={draft.bank.accountNum}
            onChange={(v) => patchDraft({ bank: { ...draft.bank, accountNum: v } })}
            error={errors.accountNum}
            touched={tried}
            inputMode="numeric"
            dir="ltr"
            testId="ach-account"
            maxLength={20}
          />
          <label className="inline">
            {t('method.accountType')}
            <select
              value={draft.bank.accountType}
              onChange={(e) =>
                patchDraft({ bank: { ...draft.bank, accountType: e.target.value as 'Checking' | 'Savings' } })
              }
            >
              <option value="Checking">{t('method.Checking')}</option>
              <option value="Savings">{t('method.Savings')}</option>
            </select>
          </label>
        </>
      ) : null}
      {draft.method.startsWith('Provider_') ? (
        <Field
          label={t('method.charityNumber')}
          value={draft.charity.ccNum}
          onChange={(v) => patchDraft({ charity: { ccNum: v } })}
          error={errors.charity}
          touched={tried}
          dir="ltr"
          testId="charity-number"
        />
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('amount')}>
          {t('nav.back')}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="method-next"
          aria-disabled={!valid}
          onClick={() => {
            setTried(true);
            if (valid) go('donor');
          }}
        >
          {t('nav.next')}
        </button>
      </div>
    </section>
  );
}
