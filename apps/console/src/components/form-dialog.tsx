/**
 * A dialog holding one form: its fields, what went wrong if the submit failed, and the submit and
 * cancel buttons. The submit's error is kept here, so closing the dialog forgets it.
 */
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Dialog } from './dialog.tsx';
import { ErrorNotice } from './notice.tsx';

export function FormDialog({
  title,
  onClose,
  onSubmit,
  submitLabel,
  submitTestId,
  testId,
  children,
}: {
  title: string;
  onClose(): void;
  /** Throws to show the error in the dialog. */
  onSubmit(): Promise<unknown>;
  /** Save unless told. */
  submitLabel?: string;
  submitTestId?: string;
  testId?: string;
  children: ReactNode;
}) {
  const { t } = useTranslation();
  const [error, setError] = useState<unknown>(null);
  return (
    <Dialog title={title} onClose={onClose} testId={testId}>
      <form
        onSubmit={async (e) => {
          e.preventDefault();
          try {
            await onSubmit();
          } catch (err) {
            setError(err);
          }
        }}
      >
        {children}
        <ErrorNotice error={error} />
        <FormActions
          submitLabel={submitLabel ?? t('common.save')}
          submitTestId={submitTestId}
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

/** A form's row of buttons: the primary submit and, when there is somewhere to go back to, cancel. */
export function FormActions({
  submitLabel,
  submitTestId,
  onCancel,
}: {
  submitLabel: string;
  submitTestId?: string;
  onCancel?(): void;
}) {
  const { t } = useTranslation();
  return (
    <div className="actions">
      <button type="submit" className="primary" data-testid={submitTestId}>
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
