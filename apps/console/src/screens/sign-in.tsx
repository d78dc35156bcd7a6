/** Sign-in: e-mail and password; a wrong password and a lock-out each say so. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { type ApiClient, ApiError } from '../api/client.ts';
import type { SessionAnswer } from '../api/types.ts';
import { Field } from '../components/field.tsx';
import { errorText } from '../components/notice.tsx';

export function SignIn({ api, onSignedIn }: { api: ApiClient; onSignedIn(s: SessionAnswer): void }) {
  const { t } = useTranslation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<string | null>(null);
  const [resetSent, setResetSent] = useState(false);

  const submit = async () => {
    setBusy(true);
    setMessage(null);
    try {
      onSignedIn(
        await api.post<SessionAnswer>('/session', { email, password }, { expectUnauthorized: true }),
      );
    } catch (e) {
      if (e instanceof ApiError && e.errorCode === 'LOCKED_OUT') {
        const minutes = Math.max(1, Math.ceil((e.retryAfterSeconds ?? 60) / 60));
        setMessage(t('auth.lockedOut', { count: minutes }));
      } else if (e instanceof ApiError && (e.status === 401 || e.errorCode === 'INVALID_CREDENTIALS')) {
        setMessage(t('auth.wrongPassword'));
      } else setMessage(errorText(e, t));
    } finally {
      setBusy(false);
    }
  };

  const forgot = async () => {
    try {
      await api.post('/password-reset', { email }, { expectUnauthorized: true });
    } catch {}
    setResetSent(true);
  };

  return (
    <section aria-labelledby="sign-in-title" className="card">
      <h1 id="sign-in-title" tabIndex={-1}>
        {t('auth.signInTitle')}
      </h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <Field
          label={t('auth.email')}
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={setEmail}
          name="email"
        />
        <Field
          label={t('auth.password')}
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={setPassword}
          name="password"
        />
        {message && (
          <p role="alert" className="notice error" data-testid="sign-in-error">
            {message}
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? t('auth.signingIn') : t('auth.signIn')}
          </button>
          <button type="button" className="link-button" disabled={!email} onClick={() => void forgot()}>
            {t('auth.forgot')}
          </button>
        </div>
        {resetSent && (
          <p role="status" className="notice">
            {t('auth.resetSent')}
          </p>
        )}
      </form>
    </section>
  );
}
