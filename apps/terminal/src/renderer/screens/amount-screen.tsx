/** Amount: keypad (and keyboard), the organisation's presets, currency, cover-the-fee, one-time or recurring. */
import type { Currency, RefCampaign } from '@kupah/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Keypad } from '../components/keypad.tsx';
import { LanguageSwitch } from '../components/language-switch.tsx';
import { money } from '../format/format.ts';
import { chargedMinor } from '../forms/build-entry.ts';
import { amountError, amountMinor, type FieldMessage, feeMinor } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

const isField = (t: EventTarget | null) =>
  t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLTextAreaElement;

export function AmountScreen({ kiosk }: { kiosk: boolean }) {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  const online = useTerminal((s) => s.status.online);
  const revoked = useTerminal((s) => s.status.phase === 'revoked');
  const summary = useTerminal((s) => s.summary);
  const { typeAmount, setAmountMinor, patchDraft, next } = useTerminal.getState();
  const { data } = useServices();
  // Kiosk: presets first; "Other amount" opens the keypad for a donor's own amount.
  const [otherAmount, setOtherAmount] = useState(false);
  // Kiosk: the organisation's campaigns, by name, for the donor to choose (the kiosk has no details step).
  const [campaigns, setCampaigns] = useState<RefCampaign[]>([]);
  useEffect(() => {
    if (!kiosk) return;
    let live = true;
    void data
      .campaigns()
      .then((list) => live && setCampaigns(list))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [kiosk, data]);

  // The physical keyboard types into the keypad (Enter and Escape are the app's: see screen-keys).
  useEffect(() => {
    if (kiosk) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.defaultPrevented || e.altKey || e.ctrlKey || e.metaKey || isField(e.target)) return;
      if (e.key === 'Enter') {
        // Enter on a keypad key or a preset means "go on", not "press this key again".
        if (!(e.target instanceof HTMLElement && e.target.closest('.keypad, .presets'))) return;
        e.preventDefault();
        document.querySelector<HTMLButtonElement>('[data-testid="amount-next"]:not(:disabled)')?.click();
        return;
      }
      if (/^[0-9]$/.test(e.key)) typeAmount(e.key);
      else if (e.key === '.' || e.key === ',') typeAmount('.');
      else if (e.key === 'Backspace') typeAmount('back');
      else if (e.key === 'Delete') typeAmount('clear');
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [kiosk, typeAmount]);

  if (!settings) return null;
  const base = amountMinor(draft.amountText) ?? 0;
  const fee = feeMinor(base, settings.coverFeePercent);
  const charged = chargedMinor(draft, settings);
  // Offline, the organisation's limits apply: say so before the donor goes any further.
  const held = Object.values(summary.pendingTotals).reduce((s: number, v) => s + (v ?? 0), 0);
  const error: FieldMessage | null =
    (revoked ? { key: 'status.revoked' } : null) ??
    amountError(draft.amountText) ??
    (base > 0 && !online && charged > settings.offline.perPaymentMinor
      ? {
          key: 'amount.offlineLimit',
          values: { limit: money(settings.offline.perPaymentMinor, draft.currency, lang) },
        }
      : base > 0 && !online && held + charged > settings.offline.totalMinor
        ? {
            key: 'amount.offlineTotal',
            values: { limit: money(settings.offline.totalMinor, draft.currency, lang) },
          }
        : null);
  const showError = error && (draft.amountText !== '' || error.key.startsWith('amount.offline') || revoked);

  return (
    <section className="screen" data-testid="amount-screen" aria-labelledby="amount-title">
      <h1 id="amount-title" tabIndex={-1}>
        {kiosk ? t('kiosk.welcome') : t('amount.title')}
      </h1>
      {kiosk ? (
        <div className="kiosk-top">
          {settings.brand?.logo ? (
            <img className="kiosk-logo" src={settings.brand.logo} alt="" data-testid="kiosk-logo" />
          ) : null}
          <p className="kiosk-org" data-testid="kiosk-org">
            {settings.orgName}
          </p>
          <LanguageSwitch testId="kiosk-language" />
        </div>
      ) : null}
      <div className="amount-grid">
        <div className="amount-main">
          <output
            className="amount-display"
            aria-live="polite"
            aria-label={t('amount.label')}
            data-testid="amount-display"
          >
            {money(base, draft.currency, lang)}
          </output>
          {settings.presetsMinor.length > 0 ? (
            <fieldset className="presets">
              <legend className={kiosk ? undefined : 'muted'}>
                {kiosk ? t('kiosk.tap') : t('amount.presets')}
              </legend>
              {settings.presetsMinor.map((p) => (
                <button
                  key={p}
                  type="button"
                  className={kiosk ? 'preset big' : 'preset'}
                  data-testid={`preset-${p}`}
                  aria-pressed={base === p}
                  onClick={() => {
                    setOtherAmount(false);
                    setAmountMinor(p);
                  }}
                >
                  {money(p, draft.currency, lang)}
                </button>
              ))}
              {kiosk ? (
                <button
                  type="button"
                  className="preset big"
                  data-testid="kiosk-other-amount"
                  aria-pressed={otherAmount}
                  onClick={() => {
                    setOtherAmount(true);
                    typeAmount('clear');
                  }}
                >
                  {t('kiosk.otherAmount')}
                </button>
              ) : null}
            </fieldset>
          ) : null}
          {kiosk && campaigns.length > 0 ? (
            <fieldset className="presets" data-testid="kiosk-campaigns">
              <legend>{t('kiosk.cause')}</legend>
              {campaigns.map((c) => (
                <button
                  key={c.campaignNum}
                  type="button"
                  className="preset big"
                  data-testid={`kiosk-campaign-${c.campaignNum}`}
                  aria-pressed={draft.campaignNum === c.campaignNum}
                  onClick={() =>
                    patchDraft({ campaignNum: draft.campaignNum === c.campaignNum ? null : c.campaignNum })
                  }
                >
                  {c.friendlyName || c.name || String(c.campaignNum)}
                </button>
              ))}
            </fieldset>
          ) : null}
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
                      {t(`currency.${c}`)}
                    </option>
                  ))}
                </select>
              </label>
            ) : null}
            {settings.coverFeePercent > 0 ? (
              <label className="inline check">
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
            <fieldset className="row toggle">
              <legend className="muted">{t('amount.kind')}</legend>
              <label className="inline check">
                <input
                  type="radio"
                  name="kind"
                  data-testid="one-time"
                  checked={!draft.recurring}
                  onChange={() => patchDraft({ recurring: false })}
                />
                {t('amount.oneTime')}
              </label>
              <label className="inline check">
                <input
                  type="radio"
                  name="kind"
                  data-testid="recurring"
                  checked={draft.recurring}
                  onChange={() => patchDraft({ recurring: true })}
                />
                {t('amount.recurring')}
              </label>
            </fieldset>
          )}
          {draft.coverFee && base > 0 ? (
            <p data-testid="amount-total">
              {t(draft.recurring ? 'amount.totalEach' : 'amount.total', {
                total: money(charged, draft.currency, lang),
              })}
            </p>
          ) : null}
          {showError ? (
            <p className="field-error" aria-live="polite" data-testid="amount-error">
              {t(error.key, error.values ?? {})}
            </p>
          ) : null}
        </div>
        {kiosk && settings.presetsMinor.length > 0 && !otherAmount ? null : <Keypad onKey={typeAmount} />}
      </div>
      <div className="actions">
        <button
          type="button"
          className="primary"
          data-primary
          disabled={!!error}
          data-testid="amount-next"
          onClick={next}
        >
          {t('nav.next')}
        </button>
      </div>
    </section>
  );
}
