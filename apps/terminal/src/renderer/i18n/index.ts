/** i18next with the terminal's two languages; Hebrew switches the whole layout to right to left. */
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en.ts';
import { he } from './he.ts';

export type Language = 'en' | 'he';

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, he: { translation: he } },
  lng: 'en',
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
  returnNull: false,
});

export const directionOf = (lang: Language): 'rtl' | 'ltr' => (lang === 'he' ? 'rtl' : 'ltr');

/** Switch language: strings, `lang` and `dir` on <html> (every layout rule follows `dir`). */
export async function applyLanguage(lang: Language): Promise<void> {
  await i18n.changeLanguage(lang);
  if (typeof document !== 'undefined') {
    document.documentElement.lang = lang;
    document.documentElement.dir = directionOf(lang);
  }
}
