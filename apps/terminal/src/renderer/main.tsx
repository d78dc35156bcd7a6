/** Renderer entry: the durable layer (created once), the bridge, the language, then the app. */
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { App } from './app.tsx';
import { ServicesContext } from './app-context.ts';
import { getBridge } from './bridge/index.ts';
import { createTerminalData } from './data/create-terminal-data.ts';
import { i18n } from './i18n/index.ts';
import './styles.css';

const bridge = getBridge();
const data = createTerminalData({ bridge });

// The end-to-end tests and the benchmark drive the data layer directly: outside production
// builds, or with ?e2e=1 in the address.
if (import.meta.env.MODE !== 'production' || new URLSearchParams(location.search).get('e2e') === '1') {
  (window as unknown as { __kupah: unknown }).__kupah = { data, bridge };
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>
        <App />
      </ServicesContext.Provider>
    </I18nextProvider>
  </StrictMode>,
);
