/**
 * Settings: currencies, presets, cover-the-fee, offline limits, schedule mode, Israel/diaspora,
 * time zone, Shabbat shift, kiosk branding (name, logo, colour) and receipt details. A viewer
 * reads them; a manager changes them (PATCH /settings).
 */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { SettingsAnswer } from '../api/types.ts';
import { Checkbox, Field, Select } from '../components/field.tsx';
import { Money, MoneyInput } from '../components/money.tsx';
import { ErrorNotice, Loaded } from '../components/notice.tsx';
import { minorToInput, parseMajor } from '../format/money.ts';
import { useCan, useConsole } from '../session.tsx';
import { useLoad } from '../use-load.ts';

const CURRENCIES = ['USD', 'ILS', 'EUR', 'GBP', 'CAD'];
const MODES = ['Integration', 'Internal', 'Gateway'];

export default function Settings() {
  const { t } = useTranslation();
  const { api } = useConsole();
  const state = useLoad(() => api.get<SettingsAnswer>('/settings'), []);
  return (
    <>
      <h1 tabIndex={-1}>{t('settings.title')}</h1>
      <Loaded state={state}>{(s) => <SettingsForm s={s} onSaved={state.reload} />}</Loaded>
    </>
  );
}

/** Presets typed as "18, 36, 100" (major units) → minor units; null when one is not an amount. */
export function parsePresets(text: string, currency: string): number[] | null {
  const parts = text
    .split(/[;\s]*[;|][\s]*|,\s+|\s+/)
    .map((p) => p.trim())
    .filter(Boolean);
  const out: number[] = [];
  for (const p of parts) {
    const r = parseMajor(p, currency);
    if (!r.ok || r.minor <= 0) return null;
    out.push(r.minor);
  }
  return out;
}

function SettingsForm({ s, onSaved }: { s: SettingsAnswer; onSaved(): void }) {
  const { t } = useTranslation();
  const { api, reloadSettings } = useConsole();
  const canChange = useCan('manager');
  const main = s.currencies[0] ?? 'USD';
  const st = s.settings;
  const [name, setName] = useState(s.name);
  const [currencies, setCurrencies] = useState<string[]>(s.currencies);
  const [presets, setPresets] = useState(
    st.terminal.presetsMinor.map((m) => minorToInput(m, main)).join(', '),
  );
  const [coverFee, setCoverFee] = useState(String(st.terminal.coverFeePercent));
  const [perPayment, setPerPayment] = useState<number | null>(st.offline.perPaymentMinor);
  const [total, setTotal] = useState<number | null>(st.offline.totalMinor);
  const [expiry, setExpiry] = useState(String(st.offline.expiryHours));
  const [mode, setMode] = useState(st.scheduleMode);
  const [il, setIl] = useState(st.il);
  const [timezone, setTimezone] = useState(st.timezone);
  const [shabbat, setShabbat] = useState(st.shabbatShift);
  const [color, setColor] = useState(st.terminal.brand?.color ?? '#1f4e79');
  const [logo, setLogo] = useState(st.terminal.brand?.logo ?? '');
  const [receipts, setReceipts] = useState({
    enabled: st.receipts.enabled ?? true,
    legalName: st.receipts.legalName ?? '',
    address: st.receipts.address ?? '',
    taxId: st.receipts.taxId ?? '',
  });
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [saved, setSaved] = useState(false);

  const readLogo = (file: File | undefined) => {
    if (!file) return;
    if (file.size > 36 * 1024) {
      setProblem(t('settings.logoTooLarge'));
      return;
    }
    const reader = new FileReader();
    reader.onload = () => setLogo(String(reader.result));
    reader.readAsDataURL(file);
  };

  const save = async () => {
    setProblem(null);
    setError(null);
    setSaved(false);
    const presetsMinor = parsePresets(presets, main);
    const fee = Number(coverFee);
    if (!presetsMinor) return setProblem(t('settings.badPresets'));
    if (!Number.isFinite(fee) || fee < 0 || fee > 10) return setProblem(t('settings.badFee'));
    if (perPayment === null || total === null) return setProblem(t('settings.badLimits'));
    if (currencies.length === 0) return setProblem(t('settings.noCurrency'));
    try {
      // The server's settings patch: flat, and null removes an optional value.
      await api.patch('/settings', {
        name,
        currencies,
        scheduleMode: mode,
        il,
        timezone,
        shabbatShift: shabbat,
        offline: { perPaymentMinor: perPayment, totalMinor: total, expiryHours: Number(expiry) },
        terminal: { presetsMinor, coverFeePercent: fee, brand: { color, logo: logo || null } },
        receipts: {
          enabled: receipts.enabled,
          legalName: receipts.legalName || null,
          address: receipts.address || null,
          taxId: receipts.taxId || null,
        },
      });
      setSaved(true);
      reloadSettings();
      onSaved();
    } catch (e) {
      setError(e);
    }
  };

  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <fieldset disabled={!canChange} className="card">
        <legend>{t('settings.organisation')}</legend>
        <Field label={t('settings.name')} value={name} onChange={setName} required />
        <fieldset className="inline">
          <legend>{t('settings.currencies')}</legend>
          {CURRENCIES.map((c) => (
            <Checkbox
              key={c}
              label={c}
              checked={currencies.includes(c)}
              onChange={(on) => setCurrencies((cs) => (on ? [...cs, c] : cs.filter((x) => x !== c)))}
            />
          ))}
        </fieldset>
        <Field
          label={t('settings.timezone')}
          value={timezone}
          onChange={setTimezone}
          dir="ltr"
          hint="America/New_York, Asia/Jerusalem"
        />
        <Checkbox label={t('settings.il')} checked={il} onChange={setIl} />
        <Checkbox label={t('settings.shabbat')} checked={shabbat} onChange={setShabbat} />
        <Select
          label={t('settings.scheduleMode')}
          value={mode}
          onChange={setMode}
          options={MODES.map((m) => ({ value: m, label: t(`settings.modes.${m}`) }))}
        />
      </fieldset>
      <fieldset disabled={!canChange} className="card">
        <legend>{t('settings.terminal')}</legend>
        <Field
          label={t('settings.presets', { currency: main })}
          value={presets}
          onChange={setPresets}
          dir="ltr"
          hint={t('settings.presetsHint')}
        />
        <Field
          label={t('settings.coverFee')}
          type="number"
          min={0}
          max={10}
          step={0.1}
          value={coverFee}
          onChange={setCoverFee}
        />
        <MoneyInput
          label={t('settings.offlinePerPayment')}
          currency={main}
          initialMinor={st.offline.perPaymentMinor}
          onChange={setPerPayment}
        />
        <MoneyInput
          label={t('settings.offlineTotal')}
          currency={main}
          initialMinor={st.offline.totalMinor}
          onChange={setTotal}
        />
        <Field
          label={t('settings.offlineExpiry')}
          type="number"
          min={1}
          value={expiry}
          onChange={setExpiry}
        />
        <p className="muted">
          {t('settings.limitsNow')} <Money minor={st.offline.perPaymentMinor} currency={main} /> /{' '}
          <Money minor={st.offline.totalMinor} currency={main} />
        </p>
      </fieldset>
      <fieldset disabled={!canChange} className="card">
        <legend>{t('settings.branding')}</legend>
        <Field label={t('settings.colour')} type="color" value={color} onChange={setColor} />
        <div className="field">
          <label htmlFor="brand-logo">{t('settings.logo')}</label>
          <input
            id="brand-logo"
            type="file"
            accept="image/png,image/jpeg,image/webp,image/svg+xml"
            onChange={(e) => readLogo(e.target.files?.[0])}
          />
          {logo && <img src={logo} alt={t('settings.logoPreview')} className="logo-preview" />}
        </div>
      </fieldset>
      <fieldset disabled={!canChange} className="card">
        <legend>{t('settings.receipts')}</legend>
        <Checkbox
          label={t('settings.receiptsEnabled')}
          checked={receipts.enabled}
          onChange={(v) => setReceipts((r) => ({ ...r, enabled: v }))}
        />
        <Field
          label={t('settings.legalName')}
          value={receipts.legalName}
          onChange={(v) => setReceipts((r) => ({ ...r, legalName: v }))}
        />
        <Field
          label={t('settings.address')}
          value={receipts.address}
          onChange={(v) => setReceipts((r) => ({ ...r, address: v }))}
        />
        <Field
          label={t('settings.taxId')}
          value={receipts.taxId}
          onChange={(v) => setReceipts((r) => ({ ...r, taxId: v }))}
          dir="ltr"
        />
      </fieldset>
      {problem && (
        <p role="alert" className="notice error">
          {problem}
        </p>
      )}
      <ErrorNotice error={error} />
      {saved && (
        <p role="status" className="notice ok">
          {t('settings.saved')}
        </p>
      )}
      {canChange && (
        <div className="actions">
          <button type="submit" className="primary">
            {t('common.save')}
          </button>
        </div>
      )}
    </form>
  );
}
