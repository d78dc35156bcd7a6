/** A labelled input with its error next to it, announced to screen readers. */
import { type KeyboardEvent, type ReactNode, useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import type { FieldMessage } from '../forms/validate.ts';

export interface FieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  error?: FieldMessage | null | undefined;
  /**
   * When to show the error: by default once something was typed or the field was left; true
   * shows it at once (e.g. enough digits typed, or the server refused the field); false holds
   * it back until the field is left.
   */
  touched?: boolean;
  type?: 'text' | 'tel' | 'email' | 'password' | 'date' | 'url';
  inputMode?: 'numeric' | 'decimal' | 'text' | 'tel' | 'email' | 'url';
  autoComplete?: string;
  testId?: string;
  dir?: 'ltr' | 'rtl' | 'auto';
  maxLength?: number;
  /** Shown under the label and read with the field (e.g. the card brand as it is typed). */
  hint?: ReactNode;
  multiline?: boolean;
  required?: boolean;
  autoFocus?: boolean;
  onKeyDown?(e: KeyboardEvent<HTMLElement>): void;
}

export function Field(p: FieldProps) {
  const { t } = useTranslation();
  const id = useId();
  const [left, setLeft] = useState(false);
  const show = !!p.error && (p.touched === true || left || (p.touched === undefined && p.value !== ''));
  const describedBy = [p.hint ? `${id}-hint` : null, show ? `${id}-error` : null].filter(Boolean).join(' ');
  const common = {
    id,
    value: p.value,
    dir: p.dir,
    maxLength: p.maxLength,
    required: p.required,
    autoFocus: p.autoFocus,
    'data-testid': p.testId,
    'aria-invalid': show ? true : undefined,
    'aria-describedby': describedBy || undefined,
    onBlur: () => setLeft(true),
    onKeyDown: p.onKeyDown,
  };
  return (
    <div className="field">
      <label htmlFor={id}>{p.label}</label>
      {p.hint ? (
        <span className="field-hint" id={`${id}-hint`} aria-live="polite">
          {p.hint}
        </span>
      ) : null}
      {p.multiline ? (
        <textarea {...common} rows={3} onChange={(e) => p.onChange(e.target.value)} />
      ) : (
        <input
          {...common}
          type={p.type ?? 'text'}
          inputMode={p.inputMode}
          autoComplete={p.autoComplete ?? 'off'}
          onChange={(e) => p.onChange(e.target.value)}
        />
      )}
      {show ? (
        <p
          className="field-error"
          id={`${id}-error`}
          aria-live="polite"
          data-testid={p.testId ? `${p.testId}-error` : undefined}
        >
          {t(p.error!.key, p.error!.values ?? {})}
        </p>
      ) : (
        // The error's place is kept, so nothing below moves when one appears.
        <p className="field-error field-error-slot" aria-hidden="true" />
      )}
    </div>
  );
}

/** A message shown for a whole group of fields (e.g. "a first and last name"), announced. */
export function GroupError({
  message,
  testId,
}: {
  message: FieldMessage | null | undefined;
  testId?: string;
}) {
  const { t } = useTranslation();
  if (!message) return null;
  return (
    <p className="field-error" aria-live="polite" data-testid={testId}>
      {t(message.key, message.values ?? {})}
    </p>
  );
}
