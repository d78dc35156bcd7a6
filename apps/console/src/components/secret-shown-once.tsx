/** A secret (a key, a one-time link) the server answers once: shown with a warning and selectable, never kept. */
import { useTranslation } from 'react-i18next';
import { Dialog } from './dialog.tsx';

export function SecretShownOnce({
  title,
  warning,
  note,
  value,
  testId,
  valueTestId,
  onClose,
}: {
  title: string;
  warning: string;
  note?: string;
  value: string;
  testId: string;
  valueTestId: string;
  onClose(): void;
}) {
  const { t } = useTranslation();
  return (
    <Dialog title={title} onClose={onClose} testId={testId}>
      <p className="notice">{warning}</p>
      {note && <p>{note}</p>}
      <p>
        <code className="secret" dir="ltr" data-testid={valueTestId}>
          {value}
        </code>
      </p>
      <div className="actions">
        <button type="button" className="primary" onClick={onClose}>
          {t('common.done')}
        </button>
      </div>
    </Dialog>
  );
}
