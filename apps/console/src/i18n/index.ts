/**
 * i18next with the console's two languages. Hebrew turns the whole layout right to left: `dir`
 * and `lang` on <html>, and the stylesheet uses only logical properties, so it mirrors. The
 * choice is remembered in localStorage.
 */
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import type { UiLanguage } from '../format/money.ts';
import { en } from './en.ts';
import { he } from './he.ts';

export const LANGUAGE_KEY = 'kupah.console.language';

export const i18n = i18next.createInstance();
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, he: { translation: he } },
  lng: 'en',
  fallbackLng: 'en',
  interpolation: { escapeValue: false },
  returnNull: false,
  initAsync: false,
});

export const directionOf = (lang: UiLanguage): 'rtl' | 'ltr' => (lang === 'he' ? 'rtl' : 'ltr');

export function storedLanguage(): UiLanguage {
  try {
    const v = globalThis.localStorage?.getItem(LANGUAGE_KEY);
    if (v === 'he' || v === 'en') return v;
  } catch {}
  const nav = globalThis.navigator?.language ?? 'en';
  return nav.toLowerCase().startsWith('he') ? 'he' : 'en';
}

/** Switch language: strings, `lang` and `dir` on <html>, remembered for the next visit. */
export async function applyLanguage(lang: UiLanguage): Promise<void> {
  await i18n.changeLanguage(lang);
  if (typeof document !== 'undefined') {
    document.documentElement.lang = lang;
    document.documentElement.dir = directionOf(lang);
    document.title = i18n.t('app.title');
  }
  try {
    globalThis.localStorage?.setItem(LANGUAGE_KEY, lang);
  } catch {}
}

export const currentLanguage = (): UiLanguage => (i18n.language === 'he' ? 'he' : 'en');
