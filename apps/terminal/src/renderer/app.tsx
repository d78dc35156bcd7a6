/** The terminal: status bar, navigation, the current screen, and the kiosk's idle reset. */
import type { RefPerson } from '@kupah/contracts';
import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from './app-context.ts';
import { StatusBar } from './components/status-bar.tsx';
import { applyLanguage } from './i18n/index.ts';
import { AmountScreen } from './screens/amount-screen.tsx';
import { DetailsScreen } from './screens/details-screen.tsx';
import { DonorScreen, personName } from './screens/donor-screen.tsx';
import { MethodScreen } from './screens/method-screen.tsx';
import { PairingScreen } from './screens/pairing-screen.tsx';
import { QueueScreen } from './screens/queue-screen.tsx';
import { ResultScreen } from './screens/result-screen.tsx';
import { ReviewScreen } from './screens/review-screen.tsx';
import { SettingsScreen } from './screens/settings-screen.tsx';
import { useTerminal } from './store/terminal-store.ts';

const WARN_SECONDS = 10;
const SUMMARY_MIN_INTERVAL_MS = 300;

/** Kiosk: after `idleSeconds` without a touch or key, clear the donor's entry and start over. */
export function useKioskIdle(active: boolean, idleSeconds: number, onIdle: () => void): number | null {
  const [left, setLeft] = useState<number | null>(null);
  useEffect(() => {
    if (!active) {
      setLeft(null);
      return;
    }
    let last = Date.now();
    const touch = () => {
      last = Date.now();
      setLeft(null);
    };
    const timer = setInterval(() => {
      const remaining = idleSeconds - Math.floor((Date.now() - last) / 1000);
      if (remaining <= 0) {
        last = Date.now();
        setLeft(null);
        onIdle();
      } else setLeft(remaining <= WARN_SECONDS ? remaining : null);
    }, 250);
    window.addEventListener('pointerdown', touch, true);
    window.addEventListener('keydown', touch, true);
    return () => {
      clearInterval(timer);
      window.removeEventListener('pointerdown', touch, true);
      window.removeEventListener('keydown', touch, true);
    };
  }, [active, idleSeconds, onIdle]);
  return left;
}

export function App() {
  const { t, i18n } = useTranslation();
  const { data } = useServices();
  const { screen, settings, local, draft, go, startOver, setSettings, setLocal, setStatus, setSummary } =
    useTerminal();
  const [loaded, setLoaded] = useState(false);
  const [collector, setCollector] = useState<RefPerson | null>(null);

  useEffect(() => {
    let live = true;
    void (async () => {
      const [pairing, localSettings] = await Promise.all([data.getPairing(), data.getLocalSettings()]);
      if (!live) return;
      setLocal(localSettings);
      await applyLanguage(localSettings.language);
      setSettings(pairing?.settings ?? null);
      if (pairing) {
        data.start();
        startOver();
      } else go('pairing');
      setLoaded(true);
    })();
    // Coalesced: a burst of outbox changes (a sync applying 100 results) costs one or two reads.
    let inFlight = false;
    let dirty = false;
    const refresh = () => {
      if (inFlight) {
        dirty = true;
        return;
      }
      inFlight = true;
      void data
        .summary()
        .then(setSummary)
        .finally(() =>
          setTimeout(() => {
            inFlight = false;
            if (dirty && live) {
              dirty = false;
              refresh();
            }
          }, SUMMARY_MIN_INTERVAL_MS),
        );
    };
    refresh();
    const offOutbox = data.onOutboxChange(refresh);
    const offStatus = data.onSyncStatus((s) => {
      setStatus(s);
      refresh();
      void data.getPairing().then((p) => p && setSettings(p.settings));
    });
    setStatus(data.syncStatus());
    return () => {
      live = false;
      offOutbox();
      offStatus();
    };
  }, [data, go, setLocal, setSettings, setStatus, setSummary, startOver]);

  useEffect(() => {
    if (local?.mode !== 'collector' || !local.collectorAccountNum) {
      setCollector(null);
      return;
    }
    void data
      .collectors()
      .then((all) => setCollector(all.find((c) => c.accountNum === local.collectorAccountNum) ?? null));
  }, [data, local]);

  const kiosk = local?.mode === 'kiosk';
  const busy = screen !== 'amount' || draft.amountText !== '';
  const left = useKioskIdle(
    kiosk && busy && screen !== 'settings' && screen !== 'pairing',
    local?.kioskIdleSeconds ?? 60,
    startOver,
  );

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      const back: Partial<Record<typeof screen, typeof screen>> = {
        method: 'amount',
        donor: 'method',
        details: 'donor',
        review: 'details',
        queue: 'amount',
        settings: 'amount',
      };
      const to = back[useTerminal.getState().screen];
      if (to) go(to);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [go]);

  if (!loaded) return null;
  return (
    <div className="app">
      <StatusBar collectorName={collector ? personName(collector, i18n.language) : null} />
      {settings ? (
        <nav className="nav" aria-label={t('app.title')}>
          <button
            type="button"
            data-testid="nav-donate"
            aria-current={screen !== 'queue' && screen !== 'settings'}
            onClick={startOver}
          >
            {t('nav.donate')}
          </button>
          {kiosk ? null : (
            <>
              <button
                type="button"
                data-testid="nav-queue"
                aria-current={screen === 'queue'}
                onClick={() => go('queue')}
              >
                {t('nav.queue')}
              </button>
              <button
                type="button"
                data-testid="nav-settings"
                aria-current={screen === 'settings'}
                onClick={() => go('settings')}
              >
                {t('nav.settings')}
              </button>
            </>
          )}
        </nav>
      ) : null}
      {left !== null ? (
        <p className="banner" role="alert" data-testid="idle-warning">
          {t('kiosk.idle', { seconds: left })}
        </p>
      ) : null}
      <main>
        {screen === 'pairing' || !settings ? <PairingScreen /> : null}
        {settings && screen === 'amount' ? <AmountScreen kiosk={kiosk} /> : null}
        {settings && screen === 'method' ? <MethodScreen /> : null}
        {settings && screen === 'donor' ? <DonorScreen /> : null}
        {settings && screen === 'details' ? <DetailsScreen /> : null}
        {settings && screen === 'review' ? <ReviewScreen /> : null}
        {settings && screen === 'result' ? <ResultScreen /> : null}
        {settings && screen === 'queue' ? <QueueScreen /> : null}
        {settings && screen === 'settings' ? <SettingsScreen /> : null}
      </main>
    </div>
  );
}
