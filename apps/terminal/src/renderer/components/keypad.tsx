/** The amount keypad: large keys, and the physical keyboard types into it as well. */
import { useTranslation } from 'react-i18next';

const KEYS = ['1', '2', '3', '4', '5', '6', '7', '8', '9', '.', '0', '00'] as const;

export function Keypad({ onKey }: { onKey(key: string): void }) {
  const { t } = useTranslation();
  return (
    <div className="keypad" dir="ltr">
      {KEYS.map((k) => (
        <button key={k} type="button" className="key" data-testid={`key-${k}`} onClick={() => onKey(k)}>
          {k}
        </button>
      ))}
      <button type="button" className="key" aria-label={t('amount.backspace')} onClick={() => onKey('back')}>
        ⌫
      </button>
      <button type="button" className="key key-wide" onClick={() => onKey('clear')}>
        {t('amount.clear')}
      </button>
    </div>
  );
}
