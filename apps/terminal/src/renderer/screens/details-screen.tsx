/**
 * Campaign, reason or a split across reasons, note; for a recurring donation the schedule and a
 * preview of its instalments, computed on the device with the server's own engine.
 */
import {
  FREQUENCIES,
  type Frequency,
  LIMITS,
  type RefCampaign,
  type RefReason,
  SPECIAL_DAY_PRESETS,
} from '@kupah/contracts';
import { computeInstalments, type Instalment, ScheduleTermsError } from '@kupah/schedule';
import { type FormEvent, useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { DateSelect } from '../components/date-select.tsx';
import { Field, GroupError } from '../components/field.tsx';
import { civilDate, hebrewDateText, money, number, todayIn } from '../format/format.ts';
import { chargedMinor, splitTargetMinor } from '../forms/build-entry.ts';
import {
  amountMinor,
  type Errors,
  noteErrors,
  partAmountError,
  type ScheduleAmounts,
  scheduleAmounts,
  scheduleErrors,
  splitErrors,
} from '../forms/validate.ts';
import { type Draft, type SpecialDayPreset, useTerminal } from '../store/terminal-store.ts';

const PREVIEW_ROWS = 12;

export type Preview = { rows: Instalment[] } | { error: 'impossible' } | null;

/** The instalments the server will compute for these terms (null while the terms are incomplete). */
export function schedulePreview(
  frequency: Frequency,
  startDate: string,
  amounts: ScheduleAmounts,
  il: boolean,
  specialPresets: readonly SpecialDayPreset[] = [],
  shabbatShift = true,
  anniversaryRule: 'anniversary' | 'yahrzeit' = 'anniversary',
  specialDates: readonly string[] = [],
): Preview {
  try {
    return {
      rows: computeInstalments({
        frequency,
        startDate,
        count: amounts.count,
        firstMinor: amounts.firstMinor,
        perPaymentMinor: amounts.perMinor,
        il,
        shabbatShift,
        ...(frequency === 'Special_Days'
          ? { specialDays: { presets: specialPresets, dates: [...specialDates] } }
          : {}),
        ...(frequency === 'Annually_Hebrew' ? { anniversaryRule } : {}),
      }),
    };
  } catch (err) {
    if (err instanceof ScheduleTermsError) return { error: 'impossible' };
    return null;
  }
}

/** Reason names in the current language (the other language when that is all there is). */
export const reasonLabel = (r: RefReason, lang: string): string =>
  (lang === 'he' ? r.nameHebrew || r.name : r.name || r.nameHebrew) ?? String(r.reasonNum);
export const campaignLabel = (c: RefCampaign): string => c.friendlyName || c.name || String(c.campaignNum);

export function detailsErrors(d: Draft, perMinor: number, splitTarget: number, today: string): Errors {
  return {
    ...splitErrors(d, splitTarget),
    ...scheduleErrors(d, today, perMinor),
    ...noteErrors(d),
  };
}

export function DetailsScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data, bridge } = useServices();
  const draft = useTerminal((s) => s.draft);
  const settings = useTerminal((s) => s.settings);
  const { patchDraft, patchSchedule, next, back } = useTerminal.getState();
  const [campaigns, setCampaigns] = useState<RefCampaign[]>([]);
  const [reasons, setReasons] = useState<RefReason[]>([]);
  /** A Special_Days date being added. */
  const [newDate, setNewDate] = useState('');
  useEffect(() => {
    let live = true;
    void data.campaigns().then((c) => live && setCampaigns(c));
    void data.reasons().then((r) => live && setReasons(r));
    return () => {
      live = false;
    };
  }, [data]);

  // Today in the device's own zone: the default start of a schedule, and its earliest.
  const today = todayIn(bridge.timeZone());
  useEffect(() => {
    if (draft.recurring && !draft.schedule.startDate) patchSchedule({ startDate: today });
  }, [draft.recurring, draft.schedule.startDate, today, patchSchedule]);

  const per = settings ? chargedMinor(draft, settings) : 0;
  const splitTarget = settings ? splitTargetMinor(draft, settings) : 0;
  const errors = detailsErrors(draft, per, splitTarget, today);
  const s = draft.schedule;
  const amounts = useMemo(
    () => (draft.recurring ? scheduleAmounts({ schedule: s }, per) : null),
    [draft.recurring, s, per],
  );
  const termsOk = !errors.count && !errors.total && !errors.startDate && !errors.specialDays;
  const preview = useMemo(
    () =>
      amounts && termsOk
        ? schedulePreview(
            s.frequency,
            s.startDate,
            amounts,
            settings?.il ?? false,
            s.specialPresets,
            settings?.shabbatShift ?? true,
            s.anniversaryRule,
            s.specialDates,
          )
        : null,
    [
      amounts,
      termsOk,
      s.frequency,
      s.startDate,
      s.specialPresets,
      settings?.il,
      settings?.shabbatShift,
      s.anniversaryRule,
      s.specialDates,
    ],
  );
  const allErrors: Errors =
    preview && 'error' in preview ? { ...errors, preview: { key: 'schedule.impossible' } } : errors;
  const valid = Object.keys(allErrors).length === 0;

  const assigned = draft.parts.reduce((sum, p) => sum + (amountMinor(p.amountText) ?? 0), 0);
  const reasonsFor = reasons.filter(
    (r) => draft.campaignNum === null || r.campaignNum === null || r.campaignNum === draft.campaignNum,
  );
  const reasonOptions = reasonsFor.map((r) => (
    <option key={r.reasonNum} value={r.reasonNum}>
      {reasonLabel(r, lang)}
    </option>
  ));
  const setPart = (i: number, patch: Partial<Draft['parts'][number]>) => {
    const parts = [...draft.parts];
    parts[i] = { ...(parts[i] ?? { reasonNum: null, amountText: '' }), ...patch };
    patchDraft({ parts });
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (valid) next();
  };

  return (
    <form className="screen" data-testid="details-screen" onSubmit={submit} noValidate autoComplete="off">
      <h1 tabIndex={-1}>{t('details.title')}</h1>
      {/* A recurring donation: its terms first, so they are chosen, not accepted by default. */}
      {draft.recurring ? (
        <fieldset data-testid="schedule">
          <legend>{t('schedule.title')}</legend>
          <div className="row">
            <label className="inline">
              {t('schedule.frequency')}
              <select
                value={s.frequency}
                data-testid="frequency"
                onChange={(e) => patchSchedule({ frequency: e.target.value as Frequency })}
              >
                {FREQUENCIES.map((f) => (
                  <option key={f} value={f}>
                    {t(`frequency.${f}`)}
                  </option>
                ))}
              </select>
            </label>
            <fieldset className="inline date-field">
              <legend>{t('schedule.startDate')}</legend>
              <DateSelect
                value={s.startDate}
                fromYear={Number(today.slice(0, 4))}
                testId="schedule-start"
                invalid={!!allErrors.startDate}
                describedBy={allErrors.startDate ? 'schedule-start-error' : undefined}
                onChange={(v) => patchSchedule({ startDate: v })}
              />
            </fieldset>
          </div>
          {allErrors.startDate ? (
            <p className="field-error" id="schedule-start-error" data-testid="schedule-start-error">
              {t(allErrors.startDate.key)}
            </p>
          ) : null}
          {s.frequency === 'Annually_Hebrew' ? (
            <label className="inline">
              {t('schedule.anniversaryRule')}
              <select
                value={s.anniversaryRule}
                data-testid="anniversary-rule"
                onChange={(e) =>
                  patchSchedule({ anniversaryRule: e.target.value as 'anniversary' | 'yahrzeit' })
                }
              >
                <option value="anniversary">{t('schedule.anniversary')}</option>
                <option value="yahrzeit">{t('schedule.yahrzeit')}</option>
              </select>
            </label>
          ) : null}
          {s.frequency === 'Special_Days' ? (
            <fieldset data-testid="special-days">
              <legend>{t('schedule.specialDays')}</legend>
              {SPECIAL_DAY_PRESETS.map((p) => (
                <label key={p} className="inline check">
                  <input
                    type="checkbox"
                    checked={s.specialPresets.includes(p)}
                    data-testid={`special-${p}`}
                    onChange={(e) =>
                      patchSchedule({
                        specialPresets: e.target.checked
                          ? [...s.specialPresets, p]
                          : s.specialPresets.filter((x) => x !== p),
                      })
                    }
                  />
                  {t(`specialDay.${p}`)}
                </label>
              ))}
              <div className="row">
                <fieldset className="inline date-field">
                  <legend>{t('schedule.specialDate')}</legend>
                  <DateSelect
                    value={newDate}
                    fromYear={Number(today.slice(0, 4))}
                    testId="special-date"
                    onChange={setNewDate}
                  />
                </fieldset>
                <button
                  type="button"
                  data-testid="special-date-add"
                  disabled={
                    !/^\d{4}-\d{2}-\d{2}$/.test(newDate) ||
                    newDate < today ||
                    s.specialDates.includes(newDate)
                  }
                  onClick={() => {
                    patchSchedule({ specialDates: [...s.specialDates, newDate].sort() });
                    setNewDate('');
                  }}
                >
                  {t('schedule.addDate')}
                </button>
              </div>
              {s.specialDates.length > 0 ? (
                <ul className="special-dates" data-testid="special-dates">
                  {s.specialDates.map((date) => (
                    <li key={date}>
                      {civilDate(date, lang)}{' '}
                      <button
                        type="button"
                        data-testid={`special-date-remove-${date}`}
                        onClick={() =>
                          patchSchedule({ specialDates: s.specialDates.filter((x) => x !== date) })
                        }
                      >
                        {t('schedule.removeDate')}
                      </button>
                    </li>
                  ))}
                </ul>
              ) : null}
              <GroupError message={allErrors.specialDays} testId="special-days-error" />
            </fieldset>
          ) : null}
          <fieldset className="row toggle">
            <legend className="muted">{t('schedule.by')}</legend>
            <label className="inline check">
              <input
                type="radio"
                name="schedule-by"
                checked={s.by === 'count'}
                data-testid="schedule-by-count"
                onChange={() => patchSchedule({ by: 'count' })}
              />
              {t('schedule.byCount')}
            </label>
            <label className="inline check">
              <input
                type="radio"
                name="schedule-by"
                checked={s.by === 'total'}
                data-testid="schedule-by-total"
                onChange={() => patchSchedule({ by: 'total' })}
              />
              {t('schedule.byTotal')}
            </label>
          </fieldset>
          {s.by === 'count' ? (
            <Field
              label={t('schedule.count')}
              value={s.countText}
              inputMode="numeric"
              dir="ltr"
              maxLength={4}
              error={allErrors.count}
              touched
              testId="schedule-count"
              onChange={(v) => patchSchedule({ countText: v.replace(/\D/g, '') })}
            />
          ) : (
            <Field
              label={t('schedule.total', { currency: draft.currency })}
              value={s.totalText}
              inputMode="decimal"
              dir="ltr"
              maxLength={13}
              error={allErrors.total}
              testId="schedule-total"
              onChange={(v) => patchSchedule({ totalText: v.replace(',', '.') })}
            />
          )}
          {amounts ? (
            <p data-testid="schedule-summary">
              {amounts.firstMinor === amounts.perMinor
                ? t('schedule.summary', {
                    count: amounts.count,
                    countText: number(amounts.count, lang),
                    amount: money(amounts.perMinor, draft.currency, lang),
                    total: money(amounts.totalMinor, draft.currency, lang),
                  })
                : t('schedule.summaryFirst', {
                    count: amounts.count,
                    countText: number(amounts.count, lang),
                    first: money(amounts.firstMinor, draft.currency, lang),
                    amount: money(amounts.perMinor, draft.currency, lang),
                    total: money(amounts.totalMinor, draft.currency, lang),
                  })}
            </p>
          ) : null}
          <GroupError message={allErrors.preview} testId="schedule-impossible" />
          {preview && 'rows' in preview ? (
            <table className="preview" data-testid="schedule-preview">
              <caption>{t('schedule.preview')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('schedule.number')}</th>
                  <th scope="col">{t('schedule.civil')}</th>
                  <th scope="col">{t('schedule.hebrew')}</th>
                  <th scope="col">{t('schedule.amount')}</th>
                </tr>
              </thead>
              <tbody>
                {preview.rows.slice(0, PREVIEW_ROWS).map((row) => (
                  <tr key={row.sequence}>
                    <td>{number(row.sequence, lang)}</td>
                    <td data-testid="civil-date">
                      {civilDate(row.dueDate, lang)}
                      {row.moved ? (
                        <span className="muted">
                          {' '}
                          {t('schedule.moved', { date: civilDate(row.nominalDate, lang) })}
                        </span>
                      ) : null}
                    </td>
                    <td data-testid="hebrew-date">
                      {hebrewDateText({ en: row.hebrewDate, he: row.hebrewDateHebrew }, lang)}
                    </td>
                    <td>{money(row.amountMinor, draft.currency, lang)}</td>
                  </tr>
                ))}
              </tbody>
              {preview.rows.length > PREVIEW_ROWS ? (
                <tfoot>
                  <tr>
                    <td colSpan={4}>
                      {t('schedule.moreRows', {
                        count: preview.rows.length - PREVIEW_ROWS,
                        last: civilDate(preview.rows[preview.rows.length - 1]!.dueDate, lang),
                      })}
                    </td>
                  </tr>
                </tfoot>
              ) : null}
            </table>
          ) : null}
        </fieldset>
      ) : null}
      <div className="row">
        <label className="inline">
          {t('details.campaign')}
          <select
            value={draft.campaignNum ?? ''}
            data-testid="campaign"
            onChange={(e) => {
              const campaignNum = e.target.value === '' ? null : Number(e.target.value);
              // A reason locked to another campaign no longer fits.
              const fits = (n: number | null) =>
                n === null ||
                campaignNum === null ||
                reasons.find((r) => r.reasonNum === n)?.campaignNum == null ||
                reasons.find((r) => r.reasonNum === n)?.campaignNum === campaignNum;
              patchDraft({
                campaignNum,
                reasonNum: fits(draft.reasonNum) ? draft.reasonNum : null,
                parts: draft.parts.map((p) => (fits(p.reasonNum) ? p : { ...p, reasonNum: null })),
              });
            }}
          >
            <option value="">{t('details.none')}</option>
            {campaigns.map((c) => (
              <option key={c.campaignNum} value={c.campaignNum}>
                {campaignLabel(c)}
              </option>
            ))}
          </select>
        </label>
        {draft.split ? null : (
          <label className="inline">
            {t('details.reason')}
            <select
              value={draft.reasonNum ?? ''}
              data-testid="reason"
              onChange={(e) =>
                patchDraft({ reasonNum: e.target.value === '' ? null : Number(e.target.value) })
              }
            >
              <option value="">{t('details.none')}</option>
              {reasonOptions}
            </select>
          </label>
        )}
      </div>
      <label className="inline check">
        <input
          type="checkbox"
          checked={draft.split}
          data-testid="split"
          onChange={(e) =>
            patchDraft({
              split: e.target.checked,
              parts: e.target.checked
                ? [{ reasonNum: draft.reasonNum, amountText: (splitTarget / 100).toFixed(2) }]
                : [],
            })
          }
        />
        {t('details.split')}
      </label>
      {draft.split ? (
        <fieldset data-testid="split-parts">
          <legend>{t('details.splitTitle', { amount: money(splitTarget, draft.currency, lang) })}</legend>
          {draft.parts.map((p, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity but their place
            <div className="row" key={i}>
              <label className="inline">
                {t('details.partReason', { n: i + 1 })}
                <select
                  value={p.reasonNum ?? ''}
                  data-testid={`part-reason-${i}`}
                  aria-invalid={p.reasonNum === null ? true : undefined}
                  onChange={(e) =>
                    setPart(i, { reasonNum: e.target.value === '' ? null : Number(e.target.value) })
                  }
                >
                  <option value="">{t('details.chooseReason')}</option>
                  {reasonOptions}
                </select>
              </label>
              <Field
                label={t('details.partAmount', { n: i + 1 })}
                value={p.amountText}
                error={partAmountError(p.amountText)}
                inputMode="decimal"
                dir="ltr"
                maxLength={12}
                testId={`part-amount-${i}`}
                onChange={(v) => setPart(i, { amountText: v.replace(',', '.') })}
              />
              <button
                type="button"
                data-testid={`part-remove-${i}`}
                onClick={() => patchDraft({ parts: draft.parts.filter((_, j) => j !== i) })}
              >
                {t('details.removePart')}
              </button>
            </div>
          ))}
          <button
            type="button"
            data-testid="part-add"
            disabled={draft.parts.length >= LIMITS.arrayItems}
            onClick={() =>
              patchDraft({
                parts: [
                  ...draft.parts,
                  {
                    reasonNum: null,
                    amountText: splitTarget - assigned > 0 ? ((splitTarget - assigned) / 100).toFixed(2) : '',
                  },
                ],
              })
            }
          >
            {t('details.addPart')}
          </button>
          <p
            data-testid="split-remaining"
            className={allErrors.split ? 'field-error' : 'muted'}
            aria-live="polite"
          >
            {t('details.remaining', { amount: money(splitTarget - assigned, draft.currency, lang) })}
            {allErrors.split ? ` — ${t(allErrors.split.key)}` : ''}
          </p>
        </fieldset>
      ) : null}
      <Field
        label={t('details.note')}
        value={draft.note}
        onChange={(v) => patchDraft({ note: v })}
        error={allErrors.note}
        multiline
        maxLength={LIMITS.note}
        testId="note"
      />

      <div className="actions">
        <button type="button" onClick={back} data-testid="details-back">
          {t('nav.back')}
        </button>
        <button type="submit" className="primary" data-primary data-testid="details-next" disabled={!valid}>
          {t('nav.next')}
        </button>
      </div>
    </form>
  );
}
