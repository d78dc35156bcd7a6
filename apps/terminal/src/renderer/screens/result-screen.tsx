/** The outcome: a receipt number, a decline, or "saved on this device" with its local reference. */
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { dateTime, money } from '../format/format.ts';
import { useTerminal } from '../store/terminal-store.ts';

export function ResultScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { bridge } = useServices();
  const { result, startOver } = useTerminal();
  if (!result) return null;
  const amount = result.currency ? money(result.amountMinor, result.currency, lang) : '';
  const lines = [
    `${t('review.amount')}: ${amount}`,
    `${t('review.method')}: ${t(`method.${result.method ?? 'Credit_Card'}`)} ${result.display.last4 ? `•••• ${result.display.last4}` : ''}`,
    result.receiptNum ? `# ${result.receiptNum}` : `# ${result.localRef}`,
    dateTime(result.createdAt, lang),
  ];
  const mail = `mailto:?subject=${encodeURIComponent(t('result.receiptTitle'))}&body=${encodeURIComponent(lines.join('\n'))}`;
  return (
    <section className="screen" data-testid="result-screen" aria-live="assertive">
      {result.state === 'done' ? (
        <h1 data-testid="result-approved">
          {t('result.approved', { receipt: result.receiptNum })}
          {result.scheduleNum ? (
            <span> · {t('result.schedule', { schedule: result.scheduleNum })}</span>
          ) : null}
        </h1>
      ) : result.state === 'declined' ? (
        <h1 className="declined" data-testid="result-declined">
          {t('result.declined', { message: result.error?.message ?? '' })}
        </h1>
      ) : result.state === 'error' || result.state === 'expired' ? (
        <h1 className="declined" data-testid="result-error">
          {t('result.error', { message: result.error?.message ?? '' })}
        </h1>
      ) : (
        <h1 data-testid="result-saved">{t('result.saved', { ref: result.localRef })}</h1>
      )}
      <p className="amount-display">{amount}</p>
      <div className="actions">
        {result.state === 'done' ? (
          <>
            <button
              type="button"
              onClick={() =>
                void bridge.printReceipt({
                  title: t('result.receiptTitle'),
                  lines,
                  direction: lang === 'he' ? 'rtl' : 'ltr',
                })
              }
            >
              {t('result.print')}
            </button>
            <a className="button" href={mail}>
              {t('result.email')}
            </a>
          </>
        ) : null}
        <button type="button" className="primary" data-testid="new-donation" onClick={startOver}>
          {t('result.another')}
        </button>
      </div>
    </section>
  );
}
