/** The terminal: status bar, navigation, the current screen, keyboard operation and the kiosk's idle reset. */
import type { RefPerson } from '@kupah/contracts';
import { type CSSProperties, useCallback, useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from './app-context.ts';
import { DraftAmount } from './components/draft-amount.tsx';
import { useScreenKeys } from './components/screen-keys.ts';
import { StatusBar } from './components/status-bar.tsx';
import { captureSwipes, clearSwipe } from './forms/swipe-capture.ts';
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
import { ShiftScreen } from './screens/shift-screen.tsx';
import { WelcomeScreen } from './screens/welcome-screen.tsx';
import { useTerminal } from './store/terminal-store.ts';

/** The kiosk warns (with a countdown) during the last seconds before it starts over. */
export const IDLE_WARN_SECONDS = 10;
const SUMMARY_MIN_INTERVAL_MS = 300;

/**
 * Kiosk: after `idleSeconds` without a touch or key, `onIdle` (clear the donor's entry and start
 * over). Returns the seconds left during the last {@link IDLE_WARN_SECONDS}, else null.
 */
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
      } else setLeft(remaining <= IDLE_WARN_SECONDS ? remaining : null);
    }, 250);
    const events = ['pointerdown', 'keydown', 'input', 'wheel'] as const;
    for (const e of events) window.addEventListener(e, touch, true);
    return () => {
      clearInterval(timer);
      for (const e of events) window.removeEventListener(e, touch, true);
    };
  }, [active, idleSeconds, onIdle]);
  return left;
}

/** Keep the summary (queued count and totals) fresh, at most a few reads per second. */
function useSummaryRefresh(): void {
  const { data } = useServices();
  const setSummary = useTerminal((s) => s.setSummary);
  const setStatus = useTerminal((s) => s.setStatus);
  const setSettings = useTerminal((s) => s.setSettings);
  useEffect(() => {
    let live = true;
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
        .then((s) => live && setSummary(s))
        .catch(() => undefined)
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
      // A pull may bring new organisation settings (currencies, presets, limits); an unpairing
      // (another window) leads back to the pairing screen.
      void data.getPairing().then((p) => {
        if (!live) return;
        if (p) setSettings(p.settings);
        else if (s.phase === 'unpaired' && useTerminal.getState().settings) {
          setSettings(null);
          useTerminal.getState().go('pairing');
        }
      });
    });
    setStatus(data.syncStatus());
    // Items cross into "expiring soon" with time alone.
    const clock = setInterval(refresh, 60_000);
    return () => {
      live = false;
      clearInterval(clock);
      offOutbox();
      offStatus();
    };
  }, [data, setSettings, setStatus, setSummary]);
}

export function App() {
  const { t, i18n } = useTranslation();
  const { data, bridge } = useServices();
  const screen = useTerminal((s) => s.screen);
  const settings = useTerminal((s) => s.settings);
  const local = useTerminal((s) => s.local);
  const { go, back, setSettings, setLocal } = useTerminal.getState();
  const [loaded, setLoaded] = useState(false);
  const [collector, setCollector] = useState<RefPerson | null>(null);
  const mainRef = useRef<HTMLElement>(null);

  const startOver = useCallback(() => {
    clearSwipe();
    useTerminal.getState().startOver();
  }, []);

  useEffect(() => {
    let live = true;
    void (async () => {
      const [pairing, localSettings] = await Promise.all([data.getPairing(), data.getLocalSettings()]);
      if (!live) return;
      setLocal(localSettings);
      await applyLanguage(localSettings.language);
      // The desktop shell locks the window in kiosk mode (the web build ignores it).
      if (localSettings.mode === 'kiosk') void bridge.setKiosk(true).catch(() => undefined);
      setSettings(pairing?.settings ?? null);
      if (pairing) {
        data.start();
        startOver();
      } else go('pairing');
      setLoaded(true);
    })();
    return () => {
      live = false;
    };
  }, [data, bridge, go, setLocal, setSettings, startOver]);
  useSummaryRefresh();

  useEffect(() => {
    document.title = t('app.title');
  }, [t]);

  useEffect(() => {
    if (local?.mode !== 'collector' || !local.collectorAccountNum) {
      setCollector(null);
      return;
    }
    let live = true;
    void data.collectors().then((all) => {
      if (live) setCollector(all.find((c) => c.accountNum === local.collectorAccountNum) ?? null);
    });
    return () => {
      live = false;
    };
  }, [data, local]);

  // A magnetic-stripe swipe on the amount or payment screen: the card is taken, never shown.
  const swipeActive = settings !== null && (screen === 'amount' || screen === 'method');
  useEffect(() => {
    if (!swipeActive) return;
    return captureSwipes(
      window,
      (r) => {
        const s = useTerminal.getState();
        s.patchDraft({
          method: 'Credit_Card',
          swiped: { brand: r.brand, last4: r.last4, errorKey: r.errorKey },
          card: { ccNum: '', cvv: '', expiry: '', holder: r.cardHolderName ?? s.draft.card.holder },
        });
      },
      undefined,
      () => {
        const s = useTerminal.getState();
        s.patchDraft({
          method: 'Credit_Card',
          swiped: { brand: '', last4: '', errorKey: 'method.errors.swipeUnreadable' },
        });
      },
    );
  }, [swipeActive]);

  const kiosk = local?.mode === 'kiosk';
  // Settings too: a staff member who unlocked them and walked away leaves them to the next donor.
  // A donor who switched the kiosk's language leaves it switched: the idle reset restores the device's.
  const otherLanguage = kiosk && local ? i18n.language !== local.language : false;
  const kioskReset = useCallback(() => {
    startOver();
    if (local) void applyLanguage(local.language);
  }, [startOver, local]);
  const left = useKioskIdle(
    kiosk && (screen !== 'welcome' || otherLanguage) && screen !== 'pairing',
    local?.kioskIdleSeconds ?? 60,
    kioskReset,
  );

  useScreenKeys(
    back,
    useCallback(() => mainRef.current, []),
  );

  // A new screen: move focus to its heading (unless a field took it), so keyboard and screen
  // reader users start at the top of what changed.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs on every screen change on purpose
  useEffect(() => {
    const active = document.activeElement;
    if (active && active !== document.body && mainRef.current?.contains(active)) return;
    mainRef.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [screen]);

  if (!loaded) return null;
  const flow = screen !== 'queue' && screen !== 'settings' && screen !== 'shift';
  // The organisation's colour on a kiosk (its settings, kept on the device for offline use).
  const brandColor =
    kiosk && /^#[0-9a-fA-F]{6}$/.test(settings?.brand?.color ?? '') ? settings?.brand?.color : null;
  return (
    <div
      className="app"
      data-testid="app"
      style={brandColor ? ({ '--brand': brandColor } as CSSProperties) : undefined}
    >
      <a className="skip-link" href="#main">
        {t('app.skip')}
      </a>
      {/* Donors at a kiosk never see the staff status (queue, totals, device): staff use the PIN. */}
      {kiosk ? null : <StatusBar collectorName={collector ? personName(collector, i18n.language) : null} />}
      {settings ? (
        <nav className="nav" aria-label={t('nav.label')}>
          <button
            type="button"
            data-testid="nav-donate"
            aria-current={flow ? 'page' : undefined}
            onClick={startOver}
          >
            {t('nav.donate')}
          </button>
          {kiosk ? null : (
            <button
              type="button"
              data-testid="nav-queue"
              aria-current={screen === 'queue' ? 'page' : undefined}
              onClick={() => go('queue')}
            >
              {t('nav.queue')}
            </button>
          )}
          <button
            type="button"
            className={kiosk ? 'nav-discreet' : undefined}
            data-testid="nav-settings"
            aria-current={screen === 'settings' ? 'page' : undefined}
            onClick={() => go('settings')}
          >
            {kiosk ? t('managerPin.staff') : t('nav.settings')}
          </button>
        </nav>
      ) : null}
      {left !== null ? (
        <div className="banner idle" role="alert" data-testid="idle-warning">
          <span>{t('kiosk.idle', { seconds: left })}</span>
          <button type="button" data-testid="idle-continue">
            {t('kiosk.continue')}
          </button>
        </div>
      ) : null}
      <main id="main" ref={mainRef}>
        {screen === 'pairing' || !settings ? <PairingScreen /> : null}
        {settings && screen === 'welcome' ? <WelcomeScreen /> : null}
        {settings && screen === 'amount' ? <AmountScreen kiosk={kiosk} /> : null}
        {settings && (screen === 'method' || screen === 'donor' || screen === 'details') ? (
          <DraftAmount />
        ) : null}
        {settings && screen === 'method' ? <MethodScreen /> : null}
        {settings && screen === 'donor' ? <DonorScreen /> : null}
        {settings && screen === 'details' ? <DetailsScreen /> : null}
        {settings && screen === 'review' ? <ReviewScreen /> : null}
        {settings && screen === 'result' ? <ResultScreen onDone={startOver} /> : null}
        {settings && screen === 'queue' ? <QueueScreen /> : null}
        {settings && screen === 'settings' ? <SettingsScreen /> : null}
        {settings && screen === 'shift' ? <ShiftScreen /> : null}
      </main>
    </div>
  );
}
