/**
 * The manager PIN asked before a staff screen or action: counts the try, says how many are left,
 * and while locked says for how long (see `manager-pin.ts`).
 */

import { checkManagerPin, minutesLeft, type PinVerdict } from '@kupah/terminal-core';
import type { TFunction } from 'i18next';
import { type FormEvent, type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { useTerminal } from '../store/terminal-store.ts';
import { Field } from './field.tsx';

/** The message for a refused PIN (null when it was right). */
export function pinRefusal(verdict: PinVerdict, t: TFunction): string | null {
  switch (verdict.kind) {
    case 'ok':
      return null;
    case 'no-pin':
      return t('managerPin.noPin');
    case 'wrong':
      return t('managerPin.wrong', { count: verdict.triesLeft });
    case 'locked':
      return t('managerPin.locked', { minutes: minutesLeft(verdict.until) });
  }
}

/** Checks a typed PIN with the terminal's data layer; keeps the store's copy of the settings fresh. */
export function useManagerPin(): (pin: string) => Promise<PinVerdict> {
  const { data } = useServices();
  const setLocal = useTerminal((s) => s.setLocal);
  return async (pin) => {
    const verdict = await checkManagerPin(data, pin);
    setLocal(await data.getLocalSettings());
    return verdict;
  };
}

export function PinGate({
  title,
  prompt,
  testId,
  onUnlock,
  onCancel,
}: {
  title: string;
  prompt: ReactNode;
  testId: string;
  onUnlock(): void;
  onCancel(): void;
}) {
  const { t } = useTranslation();
  const check = useManagerPin();
  const [pin, setPin] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const unlock = async (e: FormEvent) => {
    e.preventDefault();
    if (busy) return;
    setBusy(true);
    try {
      const refusal = pinRefusal(await check(pin), t);
      if (refusal === null) onUnlock();
      else {
        setError(refusal);
        setPin('');
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      className="screen narrow"
      data-testid={testId}
      onSubmit={(e) => void unlock(e)}
      noValidate
      autoComplete="off"
    >
      <h1 tabIndex={-1}>{title}</h1>
      <p>{prompt}</p>
      <Field
        label={t('queue.pin')}
        value={pin}
        onChange={(v) => setPin(v.replace(/\D/g, ''))}
        type="password"
        inputMode="numeric"
        autoComplete="off"
        maxLength={8}
        autoFocus
        testId="unlock-pin"
      />
      {error ? (
        <p className="field-error" role="alert" data-testid="unlock-error">
          {error}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={onCancel} data-testid="unlock-cancel">
          {t('nav.back')}
        </button>
        <button
          type="submit"
          className="primary"
          data-primary
          data-testid="unlock"
          disabled={pin.length < 4 || busy}
        >
          {t('settings.unlockButton')}
        </button>
      </div>
    </form>
  );
}
