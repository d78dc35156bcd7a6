/** Loading and error states, and the message of an API error in the UI language. */
import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError } from '../api/client.ts';

export function errorText(err: unknown, t: (k: string, o?: Record<string, unknown>) => string): string {
  if (err instanceof ApiError) {
    const known = `errors.${err.errorCode}`;
    const translated = t(known, { defaultValue: '' });
    if (err.status === 501) return t('errors.notImplemented');
    if (err.status === 403 && err.errorCode === 'FORBIDDEN') return t('errors.FORBIDDEN');
    return translated || t('errors.server', { message: err.message, code: err.errorCode });
  }
  return t('errors.network');
}

export function ErrorNotice({ error }: { error: unknown }) {
  const { t } = useTranslation();
  if (!error) return null;
  return (
    <p role="alert" className="notice error">
      {errorText(error, t)}
    </p>
  );
}

export function Loading() {
  const { t } = useTranslation();
  return (
    <p className="muted" aria-live="polite">
      {t('common.loading')}
    </p>
  );
}

export function Loaded<T>({
  state,
  children,
}: {
  state: { data: T | undefined; error: unknown; loading: boolean };
  children: (data: T) => ReactNode;
}) {
  if (state.error && state.data === undefined) return <ErrorNotice error={state.error} />;
  if (state.data === undefined) return <Loading />;
  return <>{children(state.data)}</>;
}

export function Empty({ children }: { children: ReactNode }) {
  return <p className="muted">{children}</p>;
}
