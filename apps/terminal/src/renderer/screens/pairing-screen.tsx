/** First run: pair with the backend (server address and the one-time code). */
import { type FormEvent, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { useTerminal } from '../store/terminal-store.ts';

const CODE = /^[A-Za-z0-9]{4}-?[A-Za-z0-9]{4}$/;

function validUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

export function PairingScreen() {
  const { t } = useTranslation();
  const { data } = useServices();
  const setSettings = useTerminal((s) => s.setSettings);
  const startOver = useTerminal((s) => s.startOver);
  const [serverUrl, setServerUrl] = useState(
    typeof location !== 'undefined' && location.protocol.startsWith('http') ? location.origin : '',
  );
  const [code, setCode] = useState('');
  const [name, setName] = useState('');
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<string | null>(null);
  const urlError = validUrl(serverUrl) ? null : { key: 'pairing.badUrl' };
  const codeError = CODE.test(code.trim()) ? null : { key: 'pairing.badCode' };

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (urlError || codeError) return;
    setBusy(true);
    setFailure(null);
    try {
      const pairing = await data.pair(serverUrl.trim(), code.trim(), name.trim() || null);
      setSettings(pairing.settings);
      data.start();
      startOver();
    } catch (err) {
      setFailure(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="screen narrow" onSubmit={submit} data-testid="pairing-screen">
      <h1>{t('pairing.title')}</h1>
      <p className="muted">{t('pairing.intro')}</p>
      <Field
        label={t('pairing.serverUrl')}
        value={serverUrl}
        onChange={setServerUrl}
        error={urlError}
        type="url"
        dir="ltr"
        testId="pair-url"
      />
      <Field
        label={t('pairing.code')}
        value={code}
        onChange={setCode}
        error={codeError}
        dir="ltr"
        testId="pair-code"
        maxLength={9}
      />
      <Field label={t('pairing.deviceName')} value={name} onChange={setName} testId="pair-name" />
      {failure ? (
        <p className="field-error" role="alert" data-testid="pair-error">
          {failure}
        </p>
      ) : null}
      <button
        type="submit"
        className="primary"
        disabled={busy || !!urlError || !!codeError}
        data-testid="pair-submit"
      >
        {busy ? t('pairing.working') : t('pairing.submit')}
      </button>
    </form>
  );
}
