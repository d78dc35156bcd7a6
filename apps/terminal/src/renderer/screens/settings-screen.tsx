/**
 * Device settings (behind the manager PIN once one is set): name, location, language, mode,
 * collector, kiosk idle time, the PIN itself; sync now; unpair. Kiosk mode cannot be turned on
 * (or kept) without a manager PIN, so at a kiosk all of this is behind the PIN.
 */
import type { RefPerson } from '@kupah/contracts';
import type { LocalSettings } from '@kupah/terminal-core';
import {
  derivePinRecord,
  type LocalSettingsWithPinLock,
  PairingError,
  PIN_PATTERN,
} from '@kupah/terminal-core';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { PinGate } from '../components/pin-gate.tsx';
import type { FieldMessage } from '../forms/validate.ts';
import { applyLanguage } from '../i18n/index.ts';
import { useTerminal } from '../store/terminal-store.ts';
import { personName } from './donor-screen.tsx';

export const IDLE_MIN_SECONDS = 15;
export const IDLE_MAX_SECONDS = 3600;

const numberOrNull = (s: string) => (s.trim() === '' ? null : Number(s.trim().replace(',', '.')));

interface Form {
  deviceName: string;
  locationName: string;
  latitude: string;
  longitude: string;
  language: LocalSettings['language'];
  mode: LocalSettings['mode'];
  collector: string;
  idle: string;
  pin: string;
}

/** `hasPin`: a manager PIN is set already (kiosk mode needs one, set before or now). */
export function settingsErrors(form: Form, hasPin = false): Partial<Record<keyof Form, FieldMessage>> {
  const e: Partial<Record<keyof Form, FieldMessage>> = {};
  const lat = numberOrNull(form.latitude);
  const lon = numberOrNull(form.longitude);
  if (lat !== null && !(Number.isFinite(lat) && lat >= -90 && lat <= 90))
    e.latitude = { key: 'settings.badLatitude' };
  if (lon !== null && !(Number.isFinite(lon) && lon >= -180 && lon <= 180))
    e.longitude = { key: 'settings.badLongitude' };
  // A position is both coordinates or neither.
  if (lat === null && lon !== null) e.latitude ??= { key: 'settings.bothCoordinates' };
  if (lon === null && lat !== null) e.longitude ??= { key: 'settings.bothCoordinates' };
  const idle = Number(form.idle);
  if (!/^\d+$/.test(form.idle.trim()) || idle < IDLE_MIN_SECONDS || idle > IDLE_MAX_SECONDS)
    e.idle = { key: 'settings.badIdle', values: { min: IDLE_MIN_SECONDS, max: IDLE_MAX_SECONDS } };
  if (form.pin && !PIN_PATTERN.test(form.pin)) e.pin = { key: 'settings.badPin' };
  if (form.mode === 'kiosk' && !hasPin && !form.pin) e.pin = { key: 'managerPin.kioskNeedsPin' };
  if (form.mode === 'collector' && !form.collector) e.collector = { key: 'settings.chooseCollector' };
  if (form.deviceName.length > 256 || form.locationName.length > 256)
    e.deviceName = { key: 'errors.tooLong' };
  return e;
}

export function SettingsScreen() {
  const { t, i18n } = useTranslation();
  const { data, bridge } = useServices();
  const local = useTerminal((s) => s.local);
  const { setLocal, setSettings, go } = useTerminal.getState();
  const [unlocked, setUnlocked] = useState(!local?.managerPinHash);
  const [form, setForm] = useState<Form>(() => ({
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
  const [note, setNote] = useState<{ text: string; ok: boolean } | null>(null);
  const [confirmUnpair, setConfirmUnpair] = useState(false);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    let live = true;
    void data.collectors().then((c) => live && setCollectors(c));
    return () => {
      live = false;
    };
  }, [data]);

  const errors = settingsErrors(form, !!local?.managerPinHash);
  const valid = Object.keys(errors).length === 0;
  const set = (patch: Partial<Form>) => {
    setNote(null);
    setForm({ ...form, ...patch });
  };

  if (!unlocked) {
    return (
      <PinGate
        title={t('settings.title')}
        prompt={t('settings.unlock')}
        testId="settings-locked"
        onUnlock={() => setUnlocked(true)}
        onCancel={() => go('amount')}
      />
    );
  }

  async function save(e?: FormEvent) {
    e?.preventDefault();
    if (!valid || busy) return;
    setBusy(true);
    try {
      const patch: Partial<LocalSettingsWithPinLock> = {
        deviceName: form.deviceName.trim() || null,
        location: {
          locationName: form.locationName.trim() || null,
          latitude: numberOrNull(form.latitude),
          longitude: numberOrNull(form.longitude),
        },
        language: form.language,
        mode: form.mode,
        collectorAccountNum:
          form.mode === 'collector' ? form.collector || null : (local?.collectorAccountNum ?? null),
        kioskIdleSeconds: Number(form.idle),
        ...(form.pin ? { managerPinHash: await derivePinRecord(form.pin), pinLock: null } : {}),
      };
      const saved = await data.saveLocalSettings(patch);
      setLocal(saved);
      await applyLanguage(saved.language);
      await bridge.setKiosk(saved.mode === 'kiosk').catch(() => undefined);
      setForm((f) => ({ ...f, pin: '' }));
      setNote({ text: i18n.t(form.pin ? 'settings.savedPin' : 'settings.saved'), ok: true });
    } catch (err) {
      setNote({ text: err instanceof Error ? err.message : String(err), ok: false });
    } finally {
      setBusy(false);
    }
  }

  async function unpair() {
    if (!confirmUnpair) {
      setConfirmUnpair(true);
      return;
    }
    try {
      await data.unpair();
      setSettings(null);
      go('pairing');
    } catch (err) {
      setConfirmUnpair(false);
      setNote({
        text:
          err instanceof PairingError && err.code === 'QUEUE_NOT_EMPTY'
            ? t('pairing.errors.queueNotEmpty')
            : err instanceof Error
              ? err.message
              : String(err),
        ok: false,
      });
    }
  }

  async function fillDeviceLocation() {
    const here = await bridge.location().catch(() => null);
    if (!here || here.latitude === null || here.longitude === null) {
      setNote({ text: t('settings.noLocation'), ok: false });
      return;
    }
    set({ latitude: here.latitude.toFixed(5), longitude: here.longitude.toFixed(5) });
  }

  return (
    <form
      className="screen"
      data-testid="settings-screen"
      onSubmit={(e) => void save(e)}
      noValidate
      autoComplete="off"
    >
      <h1 tabIndex={-1}>{t('settings.title')}</h1>
      <fieldset>
        <legend>{t('settings.device')}</legend>
        <Field
          label={t('settings.deviceName')}
          value={form.deviceName}
          onChange={(v) => set({ deviceName: v })}
          error={errors.deviceName}
          maxLength={256}
          testId="settings-device-name"
        />
        <div className="row">
          <Field
            label={t('settings.locationName')}
            value={form.locationName}
            onChange={(v) => set({ locationName: v })}
            maxLength={256}
            testId="settings-location"
          />
          <Field
            label={t('settings.latitude')}
            value={form.latitude}
            onChange={(v) => set({ latitude: v })}
            error={errors.latitude}
            touched={errors.latitude?.key === 'settings.bothCoordinates' ? true : undefined}
            inputMode="decimal"
            dir="ltr"
            maxLength={12}
            testId="settings-latitude"
          />
          <Field
            label={t('settings.longitude')}
            value={form.longitude}
            onChange={(v) => set({ longitude: v })}
            error={errors.longitude}
            touched={errors.longitude?.key === 'settings.bothCoordinates' ? true : undefined}
            inputMode="decimal"
            dir="ltr"
            maxLength={12}
            testId="settings-longitude"
          />
          <button type="button" onClick={() => void fillDeviceLocation()} data-testid="settings-use-location">
            {t('settings.useLocation')}
          </button>
        </div>
      </fieldset>
      <fieldset>
        <legend>{t('settings.use')}</legend>
        <div className="row">
          <label className="inline">
            {t('settings.language')}
            <select
              value={form.language}
              data-testid="settings-language"
              onChange={(e) => set({ language: e.target.value as LocalSettings['language'] })}
            >
              <option value="en" lang="en">
                English
              </option>
              <option value="he" lang="he">
                עברית
              </option>
            </select>
          </label>
          <label className="inline">
            {t('settings.mode')}
            <select
              value={form.mode}
              data-testid="settings-mode"
              onChange={(e) => set({ mode: e.target.value as LocalSettings['mode'] })}
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
                aria-invalid={errors.collector ? true : undefined}
                aria-describedby={errors.collector ? 'settings-collector-error' : undefined}
                onChange={(e) => set({ collector: e.target.value })}
              >
                <option value="">{t('settings.chooseCollector')}</option>
                {collectors.map((c) => (
                  <option key={c.accountNum} value={c.accountNum}>
                    {personName(c, i18n.language)} ({c.accountNum})
                  </option>
                ))}
              </select>
            </label>
          ) : null}
        </div>
        {errors.collector ? (
          <p className="field-error" id="settings-collector-error" data-testid="settings-collector-error">
            {collectors.length === 0 ? t('settings.noCollectors') : t(errors.collector.key)}
          </p>
        ) : null}
        {form.mode === 'kiosk' ? (
          <Field
            label={t('settings.idle')}
            value={form.idle}
            onChange={(v) => set({ idle: v.replace(/\D/g, '') })}
            error={errors.idle}
            touched
            inputMode="numeric"
            dir="ltr"
            maxLength={4}
            testId="settings-idle"
          />
        ) : null}
        {form.mode === 'kiosk' && !local?.managerPinHash && !form.pin ? (
          <p className="banner" role="alert" data-testid="kiosk-pin-warning">
            {local?.mode === 'kiosk' ? t('managerPin.kioskNoPinSet') : t('managerPin.kioskNeedsPin')}
          </p>
        ) : null}
      </fieldset>
      <fieldset>
        <legend>{t('settings.security')}</legend>
        <p className="muted">{local?.managerPinHash ? t('settings.pinSet') : t('settings.pinNotSet')}</p>
        <Field
          label={local?.managerPinHash ? t('settings.changePin') : t('settings.pin')}
          value={form.pin}
          onChange={(v) => set({ pin: v.replace(/\D/g, '') })}
          error={errors.pin}
          touched={errors.pin?.key === 'managerPin.kioskNeedsPin' ? true : undefined}
          type="password"
          inputMode="numeric"
          autoComplete="new-password"
          maxLength={8}
          testId="settings-pin"
        />
      </fieldset>
      {note ? (
        <p
          className={note.ok ? 'note' : 'field-error'}
          role={note.ok ? 'status' : 'alert'}
          data-testid="settings-note"
        >
          {note.text}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('amount')} data-testid="settings-back">
          {t('nav.back')}
        </button>
        <button type="button" onClick={() => void data.syncNow()} data-testid="sync-now">
          {t('settings.syncNow')}
        </button>
        <button type="button" onClick={() => go('shift')} data-testid="settings-close-shift">
          {t('shift.title')}
        </button>
        {local?.mode === 'kiosk' ? (
          // At a kiosk the status bar (and its queue button) is hidden from donors: staff reach the
          // queue from here, behind the PIN they just entered (the queue asks for it again).
          <button type="button" onClick={() => go('queue')} data-testid="settings-queue">
            {t('nav.queue')}
          </button>
        ) : null}
        <button
          type="button"
          className={confirmUnpair ? 'danger' : undefined}
          onClick={() => void unpair()}
          data-testid="unpair"
        >
          {confirmUnpair ? t('settings.unpairConfirm') : t('settings.unpair')}
        </button>
        <button
          type="submit"
          className="primary"
          data-primary
          disabled={!valid || busy}
          data-testid="settings-save"
        >
          {t('settings.save')}
        </button>
      </div>
    </form>
  );
}
