/** The signed-in user's account: change the password; sign out everywhere. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Field } from '../components/field.tsx';
import { NewPasswordFields, newPasswordProblem } from '../components/new-password-fields.tsx';
import { ErrorNotice } from '../components/notice.tsx';
import { useConsole } from '../session.tsx';

export default function Account() {
  const { t } = useTranslation();
  const { api, user, signedOut } = useConsole();
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [done, setDone] = useState(false);

  const change = async () => {
    setProblem(null);
    setError(null);
    setDone(false);
    const wrong = newPasswordProblem(next, again, t);
    if (wrong) return setProblem(wrong);
    try {
      await api.post('/password', { currentPassword: current, newPassword: next });
      setDone(true);
      setCurrent('');
      setNext('');
      setAgain('');
    } catch (e) {
      setError(e);
    }
  };

  const everywhere = async () => {
    try {
      await api.post('/session/sign-out-everywhere', {});
    } catch {}
    signedOut();
  };

  return (
    <>
      <h1 tabIndex={-1}>{t('account.title')}</h1>
      <p>
        <bdi>{user.email}</bdi> · {t(`roles.${user.role}`)}
      </p>
      <section className="card" aria-labelledby="pw-title">
        <h2 id="pw-title">{t('account.changePassword')}</h2>
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void change();
          }}
        >
          <Field
            label={t('account.currentPassword')}
            type="password"
            autoComplete="current-password"
            value={current}
            onChange={setCurrent}
            required
          />
          <NewPasswordFields
            password={next}
            again={again}
            onPassword={setNext}
            onAgain={setAgain}
            problem={problem}
          />
          <ErrorNotice error={error} />
          {done && (
            <p role="status" className="notice ok">
              {t('account.changed')}
            </p>
          )}
          <div className="actions">
            <button type="submit" className="primary">
              {t('account.changePassword')}
            </button>
          </div>
        </form>
      </section>
      <section className="card" aria-labelledby="everywhere-title">
        <h2 id="everywhere-title">{t('account.everywhereTitle')}</h2>
        <p>{t('account.everywhereText')}</p>
        <button type="button" onClick={() => void everywhere()} data-testid="sign-out-everywhere">
          {t('account.everywhere')}
        </button>
      </section>
    </>
  );
}
