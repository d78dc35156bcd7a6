/** Amount: keypad (and keyboard), the organisation's presets, currency, cover-the-fee, recurring. */
import type { Currency } from '@kupah/contracts';
import { useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Keypad } from '../components/keypad.tsx';
import { money } from '../format/format.ts';
import { chargedMinor } from '../forms/build-entry.ts';
import { amountError, amountMinor, feeMinor } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

export function AmountScreen({ kiosk }: { kiosk: boolean }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { draft, settings, typeAmount, setAmountMinor, patchDraft, go } = useTerminal();
  const error = amountError(draft.amountText);
  const base = amountMinor(draft.amountText) ?? 0;

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement) return;
      if (/^[0-9.]$/.test(e.key)) typeAmount(e.key);
      else if (e.key === 'Backspace') typeAmount('back');
      else if (e.key === 'Enter' && !amountError(useTerminal.getState().draft.amountText)) go('method');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [typeAmount, go]);

  if (!settings) return null;
  const fee = feeMinor(base, settings.coverFeePercent);
  return (
    <section className="screen" data-testid="amount-screen">
      <h1>{kiosk ? t('kiosk.welcome') : t('amount.title')}</h1>
      <output className="amount-display" aria-label={t('amount.label')} data-testid="amount-display">
        {money(base, draft.currency, lang)}
      </output>
      <fieldset className="presets">
        <legend className="muted">{t('amount.presets')}</legend>
        {settings.presetsMinor.map((p) => (
          <button
            key={p}
            type="button"
            className={kiosk ? 'preset big' : 'preset'}
            data-testid={`preset-${p}`}
            aria-pressed={base === p}
            onClick={() => setAmountMinor(p)}
          >
            {money(p, draft.currency, lang)}
          </button>
        ))}
      </fieldset>
      {kiosk ? null : <Keypad onKey={typeAmount} />}
      <div className="row">
        {settings.currencies.length > 1 ? (
          <label className="inline">
            {t('amount.currency')}
            <select
              value={draft.currency}
              data-testid="currency"
              onChange={(e) => patchDraft({ currency: e.target.value as Currency })}
            >
              {settings.currencies.map((c) => (
                <option key={c} value={c}>
                  {c}
                </option>
              ))}
            </select>
          </label>
        ) : null}
        {settings.coverFeePercent > 0 ? (
          <label className="inline">
            <input
              type="checkbox"
              checked={draft.coverFee}
              data-testid="cover-fee"
              onChange={(e) => patchDraft({ coverFee: e.target.checked })}
            />
            {t('amount.coverFee', {
              percent: settings.coverFeePercent,
              fee: money(fee, draft.currency, lang),
            })}
          </label>
        ) : null}
      </div>
      {kiosk ? null : (
        <div className="row" role="radiogroup" aria-label={t('schedule.title')}>
          <label className="inline">
            <input
              type="radio"
              name="kind"
              checked={!draft.recurring}
              onChange={() => patchDraft({ recurring: false })}
            />
            {t('amount.oneTime')}
          </label>
          <label className="inline">
            <input
              type="radio"
              name="kind"
              data-testid="recurring"
              checked={draft.recurring}
              onChange={() => patchDraft({ recurring: true })}
            />
            {t('amount.recurring')}
          </label>
        </div>
      )}
      {draft.amountText !== '' && error ? (
        <p className="field-error" role="alert">
          {t(error.key)}
        </p>
      ) : null}
      {draft.coverFee && base > 0 ? (
        <p>{t('amount.total', { total: money(chargedMinor(draft, settings), draft.currency, lang) })}</p>
      ) : null}
      <div className="actions">
        <button
          type="button"
          className="primary"
          disabled={!!error}
          data-testid="amount-next"
          onClick={() => go('method')}
        >
          {t('nav.next')}
        </button>
      </div>
    </section>
  );
}
