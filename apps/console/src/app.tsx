/**
 * The console: who is signed in (GET /session), the sign-in and one-time-link pages for those who
 * are not, and for those who are the shell (banner, navigation, main) with the screen the hash
 * names. Every screen is its own lazily loaded chunk.
 */
import { lazy, type ReactNode, Suspense, useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { ApiError, createApiClient } from './api/client.ts';
import type { Role, SessionAnswer, SessionUser, SettingsAnswer } from './api/types.ts';
import { LanguageSwitch } from './components/language-switch.tsx';
import { ErrorNotice, Loading } from './components/notice.tsx';
import { hrefTo, navigate, useRoute } from './router.ts';
import { LinkPage } from './screens/link-page.tsx';
import { SignIn } from './screens/sign-in.tsx';
import { type ConsoleContext, roleAtLeast, SessionContext } from './session.tsx';

const Today = lazy(() => import('./screens/today.tsx'));
const Payments = lazy(() => import('./screens/payments.tsx'));
const PaymentDetail = lazy(() => import('./screens/payment-detail.tsx'));
const Schedules = lazy(() => import('./screens/schedules.tsx'));
const Donors = lazy(() => import('./screens/donors.tsx'));
const Catalog = lazy(() => import('./screens/catalog.tsx'));
const Devices = lazy(() => import('./screens/devices.tsx'));
const IntegrationsScreen = lazy(() => import('./screens/integrations.tsx'));
const SettingsScreen = lazy(() => import('./screens/settings.tsx'));
const Users = lazy(() => import('./screens/users.tsx'));
const Audit = lazy(() => import('./screens/audit.tsx'));
const Account = lazy(() => import('./screens/account.tsx'));

interface NavItem {
  path: string;
  label: string;
  least: Role;
}

const NAV: NavItem[] = [
  { path: 'today', label: 'nav.today', least: 'viewer' },
  { path: 'payments', label: 'nav.payments', least: 'viewer' },
  { path: 'schedules', label: 'nav.schedules', least: 'viewer' },
  { path: 'donors', label: 'nav.donors', least: 'viewer' },
  { path: 'catalog', label: 'nav.catalog', least: 'viewer' },
  { path: 'devices', label: 'nav.devices', least: 'viewer' },
  { path: 'integrations', label: 'nav.integrations', least: 'manager' },
  { path: 'settings', label: 'nav.settings', least: 'viewer' },
  { path: 'users', label: 'nav.users', least: 'owner' },
  { path: 'audit', label: 'nav.audit', least: 'manager' },
];

type SessionState =
  | { kind: 'loading' }
  | { kind: 'signedOut' }
  | { kind: 'signedIn'; user: SessionUser }
  | { kind: 'error'; error: unknown };

export function App() {
  const route = useRoute();
  const [state, setState] = useState<SessionState>({ kind: 'loading' });
  const api = useMemo(
    () =>
      createApiClient({
        onUnauthorized: () => {
          setState({ kind: 'signedOut' });
        },
      }),
    [],
  );

  const accept = useCallback(
    (s: SessionAnswer) => {
      api.setCsrfToken(s.csrfToken);
      setState({ kind: 'signedIn', user: s.user });
    },
    [api],
  );

  useEffect(() => {
    api.get<SessionAnswer>('/session', undefined, { expectUnauthorized: true }).then(accept, (e) => {
      if (e instanceof ApiError && e.status === 401) setState({ kind: 'signedOut' });
      else setState({ kind: 'error', error: e });
    });
  }, [api, accept]);

  if (route[0] === 'link' && route[1]) {
    return (
      <Frame>
        <LinkPage
          api={api}
          token={route[1]}
          onSignedIn={(s) => {
            accept(s);
            navigate('today');
          }}
        />
      </Frame>
    );
  }
  if (state.kind === 'loading')
    return (
      <Frame>
        <Loading />
      </Frame>
    );
  if (state.kind === 'error')
    return (
      <Frame>
        <ErrorNotice error={state.error} />
      </Frame>
    );
  if (state.kind === 'signedOut') {
    return (
      <Frame>
        <SignIn api={api} onSignedIn={accept} />
      </Frame>
    );
  }
  return (
    <SignedIn
      api={api}
      user={state.user}
      route={route}
      onSignedOut={() => {
        api.setCsrfToken(null);
        setState({ kind: 'signedOut' });
      }}
    />
  );
}

/** The page around sign-in and one-time links: a banner with the language switch, and main. */
function Frame({ children }: { children: ReactNode }) {
  const { t } = useTranslation();
  return (
    <div className="frame">
      <header className="banner">
        <span className="brand">{t('app.title')}</span>
        <LanguageSwitch />
      </header>
      <main id="main" className="narrow">
        {children}
      </main>
    </div>
  );
}

function SignedIn({
  api,
  user,
  route,
  onSignedOut,
}: {
  api: ConsoleContext['api'];
  user: SessionUser;
  route: string[];
  onSignedOut(): void;
}) {
  const { t } = useTranslation();
  const [settings, setSettings] = useState<SettingsAnswer | null>(null);
  const [menuOpen, setMenuOpen] = useState(false);
  const loadSettings = useCallback(() => {
    api.get<SettingsAnswer>('/settings').then(setSettings, () => setSettings(null));
  }, [api]);
  useEffect(loadSettings, [loadSettings]);

  const ctx: ConsoleContext = useMemo(
    () => ({
      api,
      user,
      settings,
      timeZone: settings?.settings?.timezone,
      reloadSettings: loadSettings,
      signedOut: onSignedOut,
    }),
    [api, user, settings, loadSettings, onSignedOut],
  );

  const section = route[0] ?? 'today';
  const allowed = NAV.find((n) => n.path === section);
  const mainRef = useRef<HTMLElement>(null);
  // A new screen: focus moves to its heading (screen readers announce it), the menu closes.
  // biome-ignore lint/correctness/useExhaustiveDependencies: runs when the route changes
  useEffect(() => {
    setMenuOpen(false);
    const h1 = mainRef.current?.querySelector<HTMLElement>('h1');
    if (h1 && document.activeElement === document.body) h1.focus();
  }, [route.join('/')]);

  const signOut = async () => {
    try {
      await api.del('/session');
    } catch {}
    onSignedOut();
  };

  let screen: ReactNode;
  if (allowed && !roleAtLeast(user.role, allowed.least))
    screen = <ErrorNotice error={new ApiError(403, 'FORBIDDEN', '')} />;
  else if (section === 'payments' && route[1]) screen = <PaymentDetail receiptNum={route[1]} />;
  else
    switch (section) {
      case 'payments':
        screen = <Payments />;
        break;
      case 'schedules':
        screen = <Schedules scheduleNum={route[1]} />;
        break;
      case 'donors':
        screen = <Donors accountNum={route[1]} />;
        break;
      case 'catalog':
        screen = <Catalog />;
        break;
      case 'devices':
        screen = <Devices />;
        break;
      case 'integrations':
        screen = <IntegrationsScreen />;
        break;
      case 'settings':
        screen = <SettingsScreen />;
        break;
      case 'users':
        screen = <Users />;
        break;
      case 'audit':
        screen = <Audit />;
        break;
      case 'account':
        screen = <Account />;
        break;
      default:
        screen = <Today />;
    }

  return (
    <SessionContext.Provider value={ctx}>
      <button type="button" className="skip-link" onClick={() => mainRef.current?.focus()}>
        {t('app.skip')}
      </button>
      <div className="shell">
        <header className="banner">
          <button
            type="button"
            className="menu-button"
            aria-expanded={menuOpen}
            aria-controls="console-nav"
            onClick={() => setMenuOpen((o) => !o)}
          >
            {t('nav.menu')}
          </button>
          <span className="brand">
            {t('app.title')} · <bdi>{user.orgName}</bdi>
          </span>
          <span className="user" data-testid="signed-in-as">
            <bdi>{user.name || user.email}</bdi> ({t(`roles.${user.role}`)})
          </span>
          <LanguageSwitch />
          <a href={hrefTo('account')}>{t('nav.account')}</a>
          <button type="button" className="link-button" onClick={() => void signOut()} data-testid="sign-out">
            {t('auth.signOut')}
          </button>
        </header>
        <nav id="console-nav" className={menuOpen ? 'nav open' : 'nav'} aria-label={t('nav.label')}>
          <ul>
            {NAV.filter((n) => roleAtLeast(user.role, n.least)).map((n) => (
              <li key={n.path}>
                <a
                  href={hrefTo(n.path)}
                  aria-current={section === n.path ? 'page' : undefined}
                  data-testid={`nav-${n.path}`}
                >
                  {t(n.label)}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <main id="main" ref={mainRef} tabIndex={-1}>
          <Suspense fallback={<Loading />}>{screen}</Suspense>
        </main>
      </div>
    </SessionContext.Provider>
  );
}
