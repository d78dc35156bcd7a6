/**
 * A dialog holding one form: its fields, what went wrong if the submit failed, and the submit and
 * cancel buttons. The submit's error is kept here, so closing the dialog forgets it.
 */
import { type ReactNode, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Dialog } from './dialog.tsx';
import { FormActions } from './form-actions.tsx';
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
