/** Device settings (behind the manager PIN once one is set): name, location, language, mode, PIN. */
import type { RefPerson } from '@kupah/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import type { LocalSettings } from '../data/terminal-data.ts';
import { applyLanguage } from '../i18n/index.ts';
import { useTerminal } from '../store/terminal-store.ts';
import { personName } from './donor-screen.tsx';

const numberOrNull = (s: string) => (s.trim() === '' ? null : Number(s));

export function SettingsScreen() {
  const { t, i18n } = useTranslation();
  const { data, bridge } = useServices();
  const { local, setLocal, setSettings, go } = useTerminal();
  const [unlocked, setUnlocked] = useState(!local?.managerPinHash);
  const [pinTry, setPinTry] = useState('');
  const [form, setForm] = useState(() => ({
    deviceName: local?.deviceName ?? '',
    locationName: local?.location.locationName ?? '',
    latitude: local?.location.latitude?.toString() ?? '',
    longitude: local?.location.longitude?.toString() ?? '',
    language: local?.language ?? 'en',
    mode: local?.mode ?? 'cashier',
    collector: local?.collectorAccountNum ?? '',
    idle: String(local?.kioskIdleSeconds ?? 60),
    pin: '',
  }));
  const [collectors, setCollectors] = useState<RefPerson[]>([]);
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    void data.collectors().then(setCollectors);
  }, [data]);

  const lat = numberOrNull(form.latitude);
  const lon = numberOrNull(form.longitude);
  const idle = Number(form.idle);
  const errors = {
    latitude:
      lat !== null && !(Number.isFinite(lat) && lat >= -90 && lat <= 90)
        ? { key: 'settings.badLatitude' }
        : null,
    longitude:
      lon !== null && !(Number.isFinite(lon) && lon >= -180 && lon <= 180)
        ? { key: 'settings.badLongitude' }
        : null,
    pin: form.pin && !/^\d{4,8}$/.test(form.pin) ? { key: 'settings.badPin' } : null,
    idle: !(Number.isInteger(idle) && idle >= 15 && idle <= 600) ? { key: 'settings.badIdle' } : null,
  };
  const valid = !errors.latitude && !errors.longitude && !errors.pin && !errors.idle;

  if (!unlocked) {
    return (
      <section className="screen narrow" data-testid="settings-locked">
        <h1>{t('settings.title')}</h1>
        <p>{t('settings.unlock')}</p>
        <Field
          label={t('queue.pin')}
          value={pinTry}
          onChange={setPinTry}
          type="password"
          inputMode="numeric"
          testId="unlock-pin"
        />
        <button
          type="button"
          className="primary"
          onClick={async () => {
            if (data.checkManagerPin && (await data.checkManagerPin(pinTry))) setUnlocked(true);
            else setNote(t('queue.badPin'));
          }}
        >
          {t('settings.unlockButton')}
        </button>
        {note ? <p className="field-error">{note}</p> : null}
      </section>
    );
  }

  async function save() {
    const patch: Partial<LocalSettings> = {
      deviceName: form.deviceName.trim() || null,
      location: { locationName: form.locationName.trim() || null, latitude: lat, longitude: lon },
      language: form.language as LocalSettings['language'],
      mode: form.mode as LocalSettings['mode'],
      collectorAccountNum: form.collector || null,
      kioskIdleSeconds: idle,
    };
    const saved = await data.saveLocalSettings(patch);
    if (form.pin && data.setManagerPin) await data.setManagerPin(form.pin);
    setLocal(await data.getLocalSettings());
    await applyLanguage(saved.language);
    await bridge.setKiosk(saved.mode === 'kiosk');
    setNote(t('settings.saved'));
    setForm({ ...form, pin: '' });
  }

  return (
    <section className="screen" data-testid="settings-screen">
      <h1>{t('settings.title')}</h1>
      <Field
        label={t('settings.deviceName')}
        value={form.deviceName}
        onChange={(v) => setForm({ ...form, deviceName: v })}
        testId="settings-device-name"
      />
      <div className="row">
        <Field
          label={t('settings.locationName')}
          value={form.locationName}
          onChange={(v) => setForm({ ...form, locationName: v })}
          testId="settings-location"
        />
        <Field
          label={t('settings.latitude')}
          value={form.latitude}
          onChange={(v) => setForm({ ...form, latitude: v })}
          error={errors.latitude}
          inputMode="decimal"
          dir="ltr"
        />
        <Field
          label={t('settings.longitude')}
          value={form.longitude}
          onChange={(v) => setForm({ ...form, longitude: v })}
          error={errors.longitude}
          inputMode="decimal"
          dir="ltr"
        />
      </div>
      <div className="row">
        <label className="inline">
          {t('settings.language')}
          <select
            value={form.language}
            data-testid="settings-language"
            onChange={(e) => setForm({ ...form, language: e.target.value as 'en' | 'he' })}
          >
            <option value="en">English</option>
            <option value="he">עברית</option>
          </select>
        </label>
        <label className="inline">
          {t('settings.mode')}
          <select
            value={form.mode}
            data-testid="settings-mode"
            onChange={(e) => setForm({ ...form, mode: e.target.value as LocalSettings['mode'] })}
          >
            <option value="cashier">{t('settings.cashier')}</option>
            <option value="kiosk">{t('settings.kiosk')}</option>
            <option value="collector">{t('settings.collectorMode')}</option>
          </select>
        </label>
        {form.mode === 'collector' ? (
          <label className="inline">
            {t('settings.collector')}
            <select
              value={form.collector}
              data-testid="settings-collector"
              onChange={(e) => setForm({ ...form, collector: e.target.value })}
            >
              <option value="">—</option>
              {collectors.map((c) => (
                <option key={c.accountNum} value={c.accountNum}>
                  {personName(c, i18n.language)}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </div>
      <div className="row">
        <Field
          label={t('settings.idle')}
          value={form.idle}
          onChange={(v) => setForm({ ...form, idle: v })}
          error={errors.idle}
          inputMode="numeric"
          dir="ltr"
          testId="settings-idle"
        />
        <Field
          label={t('settings.pin')}
          value={form.pin}
          onChange={(v) => setForm({ ...form, pin: v })}
          error={errors.pin}
          type="password"
          inputMode="numeric"
          testId="settings-pin"
        />
      </div>
      {note ? (
        <p role="status" data-testid="settings-note">
          {note}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('amount')}>
          {t('nav.back')}
        </button>
        <button type="button" onClick={() => void data.syncNow()} data-testid="sync-now">
          {t('settings.syncNow')}
        </button>
        <button
          type="button"
          onClick={async () => {
            try {
              await data.unpair();
              setSettings(null);
              go('pairing');
            } catch (err) {
              setNote(err instanceof Error ? err.message : String(err));
            }
          }}
        >
          {t('settings.unpair')}
        </button>
        <button
          type="button"
          className="primary"
          disabled={!valid}
          data-testid="settings-save"
          onClick={() => void save()}
        >
          {t('settings.save')}
        </button>
      </div>
    </section>
  );
}
