/** A form's row of buttons: the submit (primary, or danger) and, when there is somewhere to go back to, cancel. */
import { useTranslation } from 'react-i18next';

export function FormActions({
  submitLabel,
  submitTestId,
  onCancel,
  danger,
  busy,
}: {
  submitLabel: string;
  submitTestId?: string;
  onCancel?(): void;
  danger?: boolean;
  busy?: boolean;
}) {
  const { t } = useTranslation();
  return (
    <div className="actions">
      <button
        type="submit"
        className={danger ? 'danger' : 'primary'}
        disabled={busy}
        data-testid={submitTestId}
      >
        {submitLabel}
      </button>
      {onCancel && (
        <button type="button" onClick={onCancel}>
          {t('common.cancel')}
        </button>
      )}
    </div>
  );
}

/** The one button of a dialog that only shows something: done. */
export function DoneActions({ onDone }: { onDone(): void }) {
  const { t } = useTranslation();
  return (
    <div className="actions">
      <button type="button" className="primary" onClick={onDone}>
        {t('common.done')}
      </button>
    </div>
  );
}
