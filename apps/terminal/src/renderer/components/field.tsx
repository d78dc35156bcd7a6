/** A labelled input with its error next to it, announced to screen readers. */
import { useId } from 'react';
import { useTranslation } from 'react-i18next';
import type { FieldMessage } from '../forms/validate.ts';

export interface FieldProps {
  label: string;
  value: string;
  onChange(value: string): void;
  error?: FieldMessage | null | undefined;
  /** Show the error only once the cashier has typed something (or tried to continue). */
  touched?: boolean;
  type?: 'text' | 'tel' | 'email' | 'password' | 'date' | 'number' | 'url';
  inputMode?: 'numeric' | 'decimal' | 'text' | 'tel' | 'email' | 'url';
  autoComplete?: string;
  testId?: string;
  dir?: 'ltr' | 'rtl' | 'auto';
  maxLength?: number;
}

export function Field(p: FieldProps) {
  const { t } = useTranslation();
  const id = useId();
  const show = p.error && (p.touched ?? p.value !== '');
  return (
    <div className="field">
      <label htmlFor={id}>{p.label}</label>
      <input
        id={id}
        type={p.type ?? 'text'}
        inputMode={p.inputMode}
        autoComplete={p.autoComplete ?? 'off'}
        value={p.value}
        dir={p.dir}
        maxLength={p.maxLength}
        data-testid={p.testId}
        aria-invalid={show ? true : undefined}
        aria-describedby={show ? `${id}-error` : undefined}
        onChange={(e) => p.onChange(e.target.value)}
      />
      {show ? (
        <p
          className="field-error"
          id={`${id}-error`}
          role="alert"
          data-testid={p.testId ? `${p.testId}-error` : undefined}
        >
          {t(p.error!.key, p.error!.values ?? {})}
        </p>
      ) : null}
    </div>
  );
}
