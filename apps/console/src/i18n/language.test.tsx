import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { I18nextProvider } from 'react-i18next';
import { afterEach, describe, expect, it } from 'vitest';
import { LanguageSwitch } from '../components/language-switch.tsx';
import { en } from './en.ts';
import { he } from './he.ts';
import { applyLanguage, i18n, LANGUAGE_KEY, storedLanguage } from './index.ts';

type Tree = { [k: string]: string | Tree };
const keys = (o: Tree, prefix = ''): string[] =>
  Object.entries(o).flatMap(([k, v]) =>
    typeof v === 'string' ? [`${prefix}${k}`] : keys(v, `${prefix}${k}.`),
  );

describe('languages', () => {
  afterEach(async () => {
    cleanup();
    await applyLanguage('en');
    localStorage.clear();
  });

  it('Hebrew sets dir="rtl" and lang="he" on <html>; English puts them back', async () => {
    await applyLanguage('he');
    expect(document.documentElement.dir).toBe('rtl');
    expect(document.documentElement.lang).toBe('he');
    expect(i18n.t('nav.payments')).toBe('תשלומים');
    await applyLanguage('en');
    expect(document.documentElement.dir).toBe('ltr');
    expect(document.documentElement.lang).toBe('en');
  });

  it('the switch changes the language and it is remembered', async () => {
    render(
      <I18nextProvider i18n={i18n}>
        <LanguageSwitch />
      </I18nextProvider>,
    );
    const button = screen.getByTestId('language-switch');
    expect(button.textContent).toBe('עברית');
    expect(button.getAttribute('lang')).toBe('he');
    fireEvent.click(button);
    await screen.findByText('English');
    expect(document.documentElement.dir).toBe('rtl');
    expect(localStorage.getItem(LANGUAGE_KEY)).toBe('he');
    expect(storedLanguage()).toBe('he');
  });

  it('has every English string in Hebrew, and no Hebrew string left in English', () => {
    expect(keys(he as unknown as Tree).sort()).toEqual(keys(en as unknown as Tree).sort());
    const same = keys(en as unknown as Tree).filter((k) => {
      const get = (o: Tree) => k.split('.').reduce<Tree | string>((n, p) => (n as Tree)[p]!, o);
      return get(en as unknown as Tree) === get(he as unknown as Tree);
    });
    // Only placeholders-only strings and the other language's own name may be the same.
    expect(same).toEqual(['errors.server', 'integrations.webhooks']);
  });
});
