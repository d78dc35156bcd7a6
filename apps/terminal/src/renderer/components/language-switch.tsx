/**
 * The kiosk donor's switch to the other language (English ⇄ Hebrew), labelled in that language.
 * The idle reset restores the device's own.
 */
import { useTranslation } from 'react-i18next';
import { applyLanguage } from '../i18n/index.ts';

export function LanguageSwitch({ testId }: { testId: string }) {
  const { t, i18n } = useTranslation();
  const other = i18n.language === 'he' ? 'en' : 'he';
  return (
    <button
      type="button"
      className="kiosk-language"
      data-testid={testId}
      lang={other}
      onClick={() => void applyLanguage(other)}
    >
      {t('kiosk.otherLanguage')}
    </button>
  );
}
