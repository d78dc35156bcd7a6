/** A new password and the same again, and what is wrong with them (too short, different). */
import { useTranslation } from 'react-i18next';
import { Field } from './field.tsx';

export const MIN_PASSWORD = 10;

/** What is wrong with a new password and its repetition, in the UI language, or null. */
export function newPasswordProblem(
  password: string,
  again: string,
  t: (k: string, o?: Record<string, unknown>) => string,
): string | null {
  if (password.length < MIN_PASSWORD) return t('auth.passwordTooShort', { count: MIN_PASSWORD });
  if (password !== again) return t('auth.passwordsDiffer');
  return null;
}

export function NewPasswordFields({
  password,
  again,
  onPassword,
  onAgain,
  problem,
}: {
  password: string;
  again: string;
  onPassword(v: string): void;
  onAgain(v: string): void;
  problem: string | null;
}) {
  const { t } = useTranslation();
  return (
    <>
      <Field
        label={t('auth.newPassword')}
        type="password"
        autoComplete="new-password"
        value={password}
        onChange={onPassword}
        required
      />
      <Field
        label={t('auth.repeatPassword')}
        type="password"
        autoComplete="new-password"
        value={again}
        onChange={onAgain}
        required
      />
      {problem && (
        <p role="alert" className="notice error">
          {problem}
        </p>
      )}
    </>
  );
}
