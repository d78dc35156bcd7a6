/**
 * End of shift: what this device took since the last close (succeeded, voided, declined, still
 * queued; by method and currency), printable, and closed with the manager PIN. The close is kept
 * on the device and reported to the server on the next sync, which answers its own totals: they
 * are shown beside the device's once known.
 */
import type { ShiftRow, ShiftTotals } from '@kupah/contracts';
import type { ShiftClose, ShiftSummary } from '@kupah/terminal-core';
import { useCallback, useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { PinGate } from '../components/pin-gate.tsx';
import { printLines } from '../components/print.ts';
import { dateTime, money } from '../format/format.ts';
import { methodName } from '../format/method-name.ts';
import { useTerminal } from '../store/terminal-store.ts';

const SECTIONS = ['succeeded', 'voided', 'declined', 'queued'] as const;
type Section = (typeof SECTIONS)[number];

/** Lines of a shift report (screen and print): one per method and currency, per section. */
export function shiftLines(
  totals: ShiftTotals,
  t: (key: string, values?: Record<string, unknown>) => string,
  lang: string,
): string[] {
  const lines: string[] = [];
  for (const section of SECTIONS) {
    const rows: ShiftRow[] = totals[section] ?? [];
    lines.push(`${t(`shift.sections.${section}`)}: ${rows.length === 0 ? t('shift.none') : ''}`.trim());
    for (const r of rows) {
      lines.push(
        `  ${methodName(t, r.method, useTerminal.getState().settings)} · ${t('shift.count', { count: r.count })} · ${money(r.amountMinor, r.currency, lang)}`,
      );
    }
  }
  return lines;
}

function Totals({ totals, testId }: { totals: ShiftTotals; testId: string }) {
  const { t, i18n } = useTranslation();
  return (
    <dl className="shift-totals" data-testid={testId}>
      {SECTIONS.map((section: Section) => {
        const rows = totals[section] ?? [];
        return (
          <div key={section} data-testid={`${testId}-${section}`}>
            <dt>{t(`shift.sections.${section}`)}</dt>
            {rows.length === 0 ? <dd className="muted">{t('shift.none')}</dd> : null}
            {rows.map((r) => (
              <dd key={`${r.method}|${r.currency}`}>
                {methodName(t, r.method, useTerminal.getState().settings)} ·{' '}
                {t('shift.count', { count: r.count })} ·{' '}
                <strong>{money(r.amountMinor, r.currency, i18n.language)}</strong>
              </dd>
            ))}
          </div>
        );
      })}
    </dl>
  );
}

export function ShiftScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data, bridge } = useServices();
  const local = useTerminal((s) => s.local);
  const settings = useTerminal((s) => s.settings);
  const go = useTerminal((s) => s.go);
  const needsPin = Boolean(local?.managerPinHash) || local?.mode === 'kiosk';
  const [unlocked, setUnlocked] = useState(!needsPin);
  const [summary, setSummary] = useState<ShiftSummary | null>(null);
  const [closed, setClosed] = useState<ShiftClose | null>(null);
  const [closedBy, setClosedBy] = useState('');
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    setSummary(await data.shiftSummary());
    if (closed) setClosed((await data.listShiftCloses()).find((c) => c.closeId === closed.closeId) ?? closed);
  }, [data, closed]);

  useEffect(() => {
    if (!unlocked) return;
    void load();
    // The server's totals arrive with the sync that reports the close.
    return data.onSyncStatus((s) => {
      if (s.phase === 'idle') void load();
    });
  }, [unlocked, load, data]);

  if (!unlocked) {
    return (
      <PinGate
        title={t('shift.title')}
        prompt={t('shift.locked')}
        testId="shift-locked"
        onUnlock={() => setUnlocked(true)}
        onCancel={() => go('settings')}
      />
    );
  }
  if (!summary || !settings) return null;
  const shown = closed ?? summary;

  async function print() {
    setNote(null);
    const lines = [
      `${settings?.orgName ?? ''} · ${local?.deviceName || settings?.deviceName || ''}`,
      t('shift.period', { from: dateTime(shown.openedAt, lang), to: dateTime(shown.at, lang) }),
      ...(closed?.closedBy ? [t('shift.closedBy', { name: closed.closedBy })] : []),
      ...shiftLines(shown.totals, t, lang),
    ];
    setNote((await printLines(bridge, t, lang, t('shift.title'), lines)).note);
  }

  async function close() {
    if (busy) return;
    setBusy(true);
    try {
      setClosed(await data.closeShift(closedBy.trim() || null));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="screen wide" data-testid="shift-screen">
      <h1 tabIndex={-1}>{closed ? t('shift.closedTitle') : t('shift.title')}</h1>
      <p className="muted" data-testid="shift-period">
        {t('shift.period', { from: dateTime(shown.openedAt, lang), to: dateTime(shown.at, lang) })}
      </p>
      <Totals totals={shown.totals} testId="shift-device" />
      {closed ? (
        closed.server ? (
          <div data-testid="shift-server">
            <h2>{t('shift.serverTitle')}</h2>
            <Totals totals={closed.server} testId="shift-server-totals" />
          </div>
        ) : (
          <p className="warning-text" data-testid="shift-not-reported">
            {t('shift.notReported')}
          </p>
        )
      ) : (
        <Field
          label={t('shift.closedByLabel')}
          value={closedBy}
          onChange={setClosedBy}
          maxLength={256}
          testId="shift-closed-by"
        />
      )}
      {note ? (
        <p role="status" data-testid="shift-print-note">
          {note}
        </p>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('settings')} data-testid="shift-back">
          {t('nav.back')}
        </button>
        <button type="button" onClick={() => void print()} data-testid="shift-print">
          {t('shift.print')}
        </button>
        {closed ? null : (
          <button
            type="button"
            className="primary"
            data-primary
            disabled={busy}
            onClick={() => void close()}
            data-testid="shift-close"
          >
            {t('shift.close')}
          </button>
        )}
      </div>
    </section>
  );
}
