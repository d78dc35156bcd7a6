/**
 * A modal dialog on the native <dialog> (showModal): the rest of the page is inert, focus moves
 * into it (its first field or button) and returns to the opener when it closes; Escape closes it.
 */
import { type ReactNode, useEffect, useId, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import { FormActions } from './form-actions.tsx';

export function Dialog({
  title,
  onClose,
  children,
  testId,
}: {
  title: string;
  onClose(): void;
  children: ReactNode;
  testId?: string;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const { t } = useTranslation();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    const opener = document.activeElement as HTMLElement | null;
    if (!dialog.open) {
      if (typeof dialog.showModal === 'function') dialog.showModal();
      else dialog.setAttribute('open', '');
    }
    const first = dialog.querySelector<HTMLElement>('input, select, textarea, button:not(.dialog-close)');
    first?.focus();
    return () => {
      if (dialog.open && typeof dialog.close === 'function') dialog.close();
      opener?.focus?.();
    };
  }, []);
  return (
    <dialog
      ref={ref}
      aria-labelledby={titleId}
      className="dialog"
      data-testid={testId}
      onCancel={(e) => {
        e.preventDefault();
        onClose();
      }}
    >
      <div className="dialog-head">
        <h2 id={titleId}>{title}</h2>
        <button type="button" className="dialog-close link-button" onClick={onClose}>
          {t('common.close')}
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** "Are you sure?" with the action's own words, and what went wrong if it failed. */
export function ConfirmDialog({
  title,
  message,
  confirmLabel,
  onConfirm,
  onClose,
  danger,
  busy,
  error,
  children,
  testId,
}: {
  title: string;
  message?: ReactNode;
  confirmLabel: string;
  onConfirm(): void;
  onClose(): void;
  danger?: boolean;
  busy?: boolean;
  error?: ReactNode;
  children?: ReactNode;
  testId?: string;
}) {
  return (
    <Dialog title={title} onClose={onClose} testId={testId}>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          onConfirm();
        }}
      >
        {message && <p>{message}</p>}
        {children}
        {error}
        <FormActions submitLabel={confirmLabel} danger={danger} busy={busy} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
