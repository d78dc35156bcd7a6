/** Amounts shown and typed: minor units in, minor units out, the UI language's format. */
import { useId, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { formatMinor, minorToInput, parseMajor, type UiLanguage } from '../format/money.ts';

export function useLang(): UiLanguage {
  const { i18n } = useTranslation();
  return i18n.language === 'he' ? 'he' : 'en';
}

export function Money({
  minor,
  currency,
}: {
  minor: number | null | undefined;
  currency: string | undefined;
}) {
  const lang = useLang();
  if (minor === null || minor === undefined || !currency) return <span>—</span>;
  // Digits stay left to right inside a right-to-left line.
  return (
    <bdi className="money" dir="ltr">
      {formatMinor(minor, currency, lang)}
    </bdi>
  );
}

/**
 * A major-units amount field: what is typed is kept as text and parsed exactly (`parseMajor`);
 * `onChange` gets the minor units, or null while the text is not a valid amount.
 */
export function MoneyInput({
  label,
  currency,
  initialMinor,
  maxMinor,
  onChange,
  name,
}: {
  label: string;
  currency: string;
  initialMinor?: number;
  maxMinor?: number;
  onChange(minor: number | null): void;
  name?: string;
}) {
  const { t } = useTranslation();
  const id = useId();
  const [text, setText] = useState(initialMinor === undefined ? '' : minorToInput(initialMinor, currency));
  const parsed = parseMajor(text, currency, maxMinor);
  const error = text === '' || parsed.ok ? null : t(`money.${parsed.error}`);
  return (
    <div className="field">
      <label htmlFor={id}>
        {label} ({currency})
      </label>
      <input
        id={id}
        name={name}
        inputMode="decimal"
        dir="ltr"
        value={text}
        aria-invalid={error ? true : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        onChange={(e) => {
          setText(e.target.value);
          const p = parseMajor(e.target.value, currency, maxMinor);
          onChange(p.ok ? p.minor : null);
        }}
      />
      {error && (
        <span id={`${id}-error`} className="field-error">
          {error}
        </span>
      )}
    </div>
  );
}
