/** English ⇄ Hebrew, labelled in the other language; the choice is remembered. */
import { useTranslation } from 'react-i18next';
import { applyLanguage } from '../i18n/index.ts';

export function LanguageSwitch() {
  const { t, i18n } = useTranslation();
  const other = i18n.language === 'he' ? 'en' : 'he';
  return (
    <button
      type="button"
      className="link-button"
      lang={other}
      data-testid="language-switch"
      onClick={() => void applyLanguage(other)}
    >
      {t('common.otherLanguage')}
    </button>
  );
}
