/** First run: pair with the backend (server address and the one-time code). */

import { InsecureServerUrlError, insecureServerUrl, PairingError } from '@kupah/terminal-core';
import { type FormEvent, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import type { FieldMessage } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

/**
 * A pairing code as typed or pasted: any case, with or without its dash, spaces (`7NBH EMTV`),
 * or line breaks from a message. Normalised to `XXXX-XXXX`; null if it is not 8 letters and digits.
 */
export function normalisePairingCode(typed: string): string | null {
  const bare = typed.toUpperCase().replace(/[\s\-–—_.]/g, '');
  return /^[A-Z0-9]{8}$/.test(bare) ? `${bare.slice(0, 4)}-${bare.slice(4)}` : null;
}

/**
 * The pairing code the console put in the terminal's address (`/terminal/#pair=<code>`, its QR
 * code's link), or '' without one. The fragment never reaches a server.
 */
export function pairingCodeFromAddress(hash: string): string {
  const m = /^#pair=([^&]*)/.exec(hash);
  if (!m) return '';
  try {
    return normalisePairingCode(decodeURIComponent(m[1] ?? '')) ?? '';
  } catch {
    return '';
  }
}

function validUrl(s: string): boolean {
  try {
    const u = new URL(s.trim());
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Where a pairing failure is shown: next to the field it concerns, or under the form. */
interface Failure {
  field: 'url' | 'code' | 'form';
  message: FieldMessage;
}

function failureOf(err: unknown): Failure {
  if (err instanceof InsecureServerUrlError) return { field: 'url', message: { key: 'pairing.insecureUrl' } };
  if (err instanceof PairingError) {
    switch (err.code) {
      case 'PAIRING_CODE_INVALID':
        return { field: 'code', message: { key: 'pairing.errors.codeRefused' } };
      case 'UNREACHABLE':
        return { field: 'url', message: { key: 'pairing.errors.unreachable' } };
      case 'QUEUE_NOT_EMPTY':
        return { field: 'form', message: { key: 'pairing.errors.queueNotEmpty' } };
      default:
        return { field: 'form', message: { key: 'pairing.errors.server', values: { detail: err.message } } };
    }
  }
  return {
    field: 'form',
    message: {
      key: 'pairing.errors.server',
      values: { detail: err instanceof Error ? err.message : String(err) },
    },
  };
}

export function PairingScreen() {
  const { t } = useTranslation();
  const { data } = useServices();
  const setSettings = useTerminal((s) => s.setSettings);
  const startOver = useTerminal((s) => s.startOver);
  const [serverUrl, setServerUrl] = useState(
    typeof location !== 'undefined' && location.protocol.startsWith('http') ? location.origin : '',
  );
  const [code, setCode] = useState(() =>
    typeof location !== 'undefined' ? pairingCodeFromAddress(location.hash) : '',
  );
  // The code is taken once: the fragment leaves the address (and the history) at once.
  useEffect(() => {
    if (typeof location !== 'undefined' && location.hash.startsWith('#pair=')) {
      history.replaceState(history.state, '', location.pathname + location.search);
    }
  }, []);
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<Failure | null>(null);
  const urlError = !validUrl(serverUrl)
    ? { key: 'pairing.badUrl' }
    : insecureServerUrl(serverUrl.trim())
      ? { key: 'pairing.insecureUrl' }
      : null;
  const normalisedCode = normalisePairingCode(code);
  const codeError = normalisedCode ? null : { key: 'pairing.badCode' };

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (urlError || codeError || busy) return;
    setBusy(true);
    setFailure(null);
    try {
      const pairing = await data.pair(
        serverUrl.trim().replace(/\/+$/, ''),
        normalisedCode ?? code.trim(),
        name.trim() || null,
      );
      setSettings(pairing.settings);
      data.start();
      startOver();
    } catch (err) {
      setFailure(failureOf(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="screen narrow" onSubmit={submit} data-testid="pairing-screen" noValidate>
      <h1 tabIndex={-1}>{t('pairing.title')}</h1>
      <p className="muted">{t('pairing.intro')}</p>
      <Field
        label={t('pairing.serverUrl')}
        value={serverUrl}
        onChange={(v) => {
          setServerUrl(v);
          if (failure?.field === 'url') setFailure(null);
        }}
        error={failure?.field === 'url' ? failure.message : urlError}
        touched={failure?.field === 'url' ? true : undefined}
        type="url"
        inputMode="url"
        dir="ltr"
        required
        testId="pair-url"
      />
      <Field
        label={t('pairing.code')}
        value={code}
        onChange={(v) => {
          setCode(v);
          if (failure?.field === 'code') setFailure(null);
        }}
        error={failure?.field === 'code' ? failure.message : codeError}
        touched={failure?.field === 'code' ? true : undefined}
        dir="ltr"
        required
        autoFocus
        testId="pair-code"
        maxLength={32}
      />
      <Field
        label={t('pairing.deviceName')}
        value={name}
        onChange={setName}
        maxLength={256}
        testId="pair-name"
      />
      {failure?.field === 'form' ? (
        <p className="field-error" role="alert" data-testid="pair-error">
          {t(failure.message.key, failure.message.values ?? {})}
        </p>
      ) : null}
      <div className="actions">
        <button
          type="submit"
          className="primary"
          data-primary
          disabled={busy || !!urlError || !!codeError}
          data-testid="pair-submit"
        >
          {busy ? t('pairing.working') : t('pairing.submit')}
        </button>
      </div>
    </form>
  );
}
