/**
 * The donation's amount on every step after the amount screen (payment, donor, details), so the
 * cashier and the donor see what is being charged while they fill in the rest.
 */
import { useTranslation } from 'react-i18next';
import { money } from '../format/format.ts';
import { chargedMinor } from '../forms/build-entry.ts';
import { useTerminal } from '../store/terminal-store.ts';

export function DraftAmount() {
  const { t, i18n } = useTranslation();
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  if (!settings) return null;
  const minor = chargedMinor(draft, settings);
  if (minor <= 0) return null;
  const amount = money(minor, draft.currency, i18n.language);
  return (
    <p className="draft-amount" data-testid="draft-amount" aria-live="polite">
      {draft.recurring
        ? t('flow.amountRecurring', { amount, frequency: t(`frequency.${draft.schedule.frequency}`) })
        : t('flow.amount', { amount })}
    </p>
  );
}
