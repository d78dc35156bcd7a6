/**
 * The kiosk's welcome (attract) screen: what a passer-by sees between donors, in the organisation's
 * look (name, logo and colour from its settings, kept on the device for offline use), with one big
 * target to start and the donor's choice of language. The idle reset comes back here.
 */
import { useTranslation } from 'react-i18next';
import { LanguageSwitch } from '../components/language-switch.tsx';
import { useTerminal } from '../store/terminal-store.ts';

export function WelcomeScreen() {
  const { t } = useTranslation();
  const settings = useTerminal((s) => s.settings);
  const go = useTerminal((s) => s.go);
  if (!settings) return null;
  return (
    <section className="screen welcome" data-testid="welcome-screen" aria-labelledby="welcome-title">
      {settings.brand?.logo ? (
        <img className="welcome-logo" src={settings.brand.logo} alt="" data-testid="welcome-logo" />
      ) : null}
      <p className="welcome-org" data-testid="welcome-org">
        {settings.orgName}
      </p>
      <h1 id="welcome-title" tabIndex={-1}>
        {t('kiosk.attract')}
      </h1>
      <p className="welcome-lead">{t('kiosk.attractLead')}</p>
      <button
        type="button"
        className="primary welcome-start"
        data-testid="kiosk-start"
        onClick={() => go('amount')}
      >
        {t('kiosk.start')}
      </button>
      <LanguageSwitch testId="welcome-language" />
    </section>
  );
}
