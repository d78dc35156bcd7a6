/** A secret (a key, a one-time link) the server answers once: shown with a warning and selectable, never kept. */
import { Dialog } from './dialog.tsx';
import { DoneActions } from './form-actions.tsx';

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
  return (
    <Dialog title={title} onClose={onClose} testId={testId}>
      <p className="notice">{warning}</p>
      {note && <p>{note}</p>}
      <p>
        <code className="secret" dir="ltr" data-testid={valueTestId}>
          {value}
        </code>
      </p>
      <DoneActions onDone={onClose} />
    </Dialog>
  );
}
