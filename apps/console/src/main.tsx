/** Console entry: the remembered language, then the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { App } from './app.tsx';
import { applyLanguage, i18n, storedLanguage } from './i18n/index.ts';
import './styles.css';

void applyLanguage(storedLanguage());

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <App />
    </I18nextProvider>
  </StrictMode>,
);
