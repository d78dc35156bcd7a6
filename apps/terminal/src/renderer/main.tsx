/**
 * Renderer entry: the platform's bridge, the durable layer (created once), the language, then the
 * app. `#platform` is resolved when the renderer is built: the web build gets the web bridge and
 * the service worker, the Electron build the preload's bridge (package.json `imports`).
 */

import { createTerminalData } from '@kupah/terminal-core';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { I18nextProvider } from 'react-i18next';
import { platformBridge, startOfflineSupport } from '#platform';
import { App } from './app.tsx';
import { ServicesContext } from './app-context.ts';
import { i18n } from './i18n/index.ts';
import './styles.css';

const bridge = platformBridge();
const data = createTerminalData({ bridge });

// The end-to-end tests and the benchmark drive the data layer directly (discard, unpair, void
// with no manager PIN), so it is exposed only by the dev server and by builds made for them
// (`vite build --mode e2e`): `__KUPAH_TEST_HOOKS__` is a compile-time constant (vite.config.ts),
// false in a production build, where this block is left out. Nothing at run time (no address,
// no setting) can turn it on.
if (__KUPAH_TEST_HOOKS__) {
  (window as unknown as { __kupah: unknown }).__kupah = { data, bridge };
}

startOfflineSupport();

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <I18nextProvider i18n={i18n}>
      <ServicesContext.Provider value={{ data, bridge }}>
        <App />
      </ServicesContext.Provider>
    </I18nextProvider>
  </StrictMode>,
);
