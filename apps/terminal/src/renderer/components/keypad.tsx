/** The amount keypad: large keys; the physical keyboard types into it as well (see the amount screen). */
import { useTranslation } from 'react-i18next';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '.', '0', '00'] as const;

export function Keypad({ onKey }: { onKey(key: string): void }) {
  const { t } = useTranslation();
  return (
    // Digits read left to right in Hebrew as well: the keypad keeps its layout.
    <fieldset className="keypad" dir="ltr">
      <legend className="visually-hidden">{t('amount.keypad')}</legend>
      {KEYS.map((k) => (
        <button
          key={k}
          type="button"
          className="key"
          data-testid={`key-${k}`}
          aria-label={k === '.' ? t('amount.decimalPoint') : undefined}
          onClick={() => onKey(k)}
        >
          {k}
        </button>
      ))}
      <button
        type="button"
        className="key"
        data-testid="key-back"
        aria-label={t('amount.backspace')}
        onClick={() => onKey('back')}
      >
        <span aria-hidden="true">⌫</span>
      </button>
      <button type="button" className="key key-wide" data-testid="key-clear" onClick={() => onKey('clear')}>
        {t('amount.clear')}
      </button>
    </fieldset>
  );
}
