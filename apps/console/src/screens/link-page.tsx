/** A one-time link (`#/link/<token>`): an invitation or a reset; set the password, signed in. */
import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { ApiClient } from '../api/client.ts';
import type { LinkInfo, SessionAnswer } from '../api/types.ts';
import { Field } from '../components/field.tsx';
import { NewPasswordFields, newPasswordProblem } from '../components/new-password-fields.tsx';
import { ErrorNotice, Loaded } from '../components/notice.tsx';
import { useLoad } from '../use-load.ts';

export function LinkPage({
  api,
  token,
  onSignedIn,
}: {
  api: ApiClient;
  token: string;
  onSignedIn(s: SessionAnswer): void;
}) {
  const { t } = useTranslation();
  const info = useLoad(
    () => api.get<LinkInfo>(`/links/${encodeURIComponent(token)}`, undefined, { expectUnauthorized: true }),
    [token],
  );
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [problem, setProblem] = useState<string | null>(null);

  const submit = async (kind: LinkInfo['kind']) => {
    setProblem(null);
    setError(null);
    const wrong = newPasswordProblem(password, again, t);
    if (wrong) return setProblem(wrong);
    try {
      const body = kind === 'invitation' && name ? { password, name } : { password };
      onSignedIn(
        await api.post<SessionAnswer>(`/links/${encodeURIComponent(token)}`, body, {
          expectUnauthorized: true,
        }),
      );
    } catch (e) {
      setError(e);
    }
  };

  return (
    <section className="card" aria-labelledby="link-title">
      <h1 id="link-title" tabIndex={-1}>
        {t('auth.setPasswordTitle')}
      </h1>
      <Loaded state={info}>
        {(link) => (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void submit(link.kind);
            }}
          >
            <p>
              {t(link.kind === 'invitation' ? 'auth.invitationFor' : 'auth.resetFor', {
                email: link.email,
                org: link.orgName,
              })}
            </p>
            {link.kind === 'invitation' && (
              <Field label={t('auth.name')} value={name} onChange={setName} autoComplete="name" />
            )}
            <NewPasswordFields
              password={password}
              again={again}
              onPassword={setPassword}
              onAgain={setAgain}
              problem={problem}
            />
            <ErrorNotice error={error} />
            <div className="actions">
              <button type="submit" className="primary">
                {t('auth.setPassword')}
              </button>
            </div>
          </form>
        )}
      </Loaded>
    </section>
  );
}
