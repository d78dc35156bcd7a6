/** Campaign, reason or a split across reasons, note; for a recurring donation the schedule and its preview. */
import { FREQUENCIES, type Frequency, type RefCampaign, type RefReason } from '@kupah/contracts';
import { computeInstalments, type Instalment } from '@kupah/schedule';
import { useEffect, useMemo, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { useServices } from '../app-context.ts';
import { Field } from '../components/field.tsx';
import { civilDate, money, todayIn } from '../format/format.ts';
import { chargedMinor } from '../forms/build-entry.ts';
import { amountMinor, scheduleErrors, splitErrors } from '../forms/validate.ts';
import { useTerminal } from '../store/terminal-store.ts';

const PREVIEW_ROWS = 12;

export function schedulePreview(
  frequency: Frequency,
  startDate: string,
  count: number,
  perMinor: number,
  il: boolean,
): Instalment[] | null {
  if (frequency === 'Special_Days') return null;
  try {
    return computeInstalments({
      frequency,
      startDate,
      count,
      firstMinor: perMinor,
      perPaymentMinor: perMinor,
      il,
      shabbatShift: true,
    });
  } catch {
    return null;
  }
}

export function DetailsScreen() {
  const { t, i18n } = useTranslation();
  const lang = i18n.language;
  const { data, bridge } = useServices();
  const { draft, settings, patchDraft, go } = useTerminal();
  const [campaigns, setCampaigns] = useState<RefCampaign[]>([]);
  const [reasons, setReasons] = useState<RefReason[]>([]);
  useEffect(() => {
    void data.campaigns().then(setCampaigns);
    void data.reasons().then(setReasons);
  }, [data]);
  const today = todayIn(settings?.timezone ?? bridge.timeZone());
  useEffect(() => {
    if (draft.recurring && !draft.schedule.startDate)
      patchDraft({ schedule: { ...draft.schedule, startDate: today } });
  }, [draft.recurring, draft.schedule, today, patchDraft]);

  const total = settings ? chargedMinor(draft, settings) : 0;
  const errors = { ...splitErrors(draft, total), ...scheduleErrors(draft, today) };
  const count = Number(draft.schedule.countText);
  const preview = useMemo(
    () =>
      draft.recurring && !errors.count && !errors.startDate
        ? schedulePreview(
            draft.schedule.frequency,
            draft.schedule.startDate,
            count,
            total,
            settings?.il ?? false,
          )
        : null,
    [draft.recurring, draft.schedule, count, total, settings?.il, errors.count, errors.startDate],
  );
  const assigned = draft.parts.reduce((s, p) => s + (amountMinor(p.amountText) ?? 0), 0);
  const reasonsFor = reasons.filter(
    (r) => draft.campaignNum === null || r.campaignNum === null || r.campaignNum === draft.campaignNum,
  );
  const valid = Object.keys(errors).length === 0;
  const reasonLabel = (r: RefReason) =>
    (lang === 'he' ? r.nameHebrew || r.name : r.name || r.nameHebrew) ?? String(r.reasonNum);
  const reasonOptions = reasonsFor.map((r) => (
    <option key={r.reasonNum} value={r.reasonNum}>
      {reasonLabel(r)}
    </option>
  ));

  return (
    <section className="screen" data-testid="details-screen">
      <h1>{t('details.title')}</h1>
      <div className="row">
        <label className="inline">
          {t('details.campaign')}
          <select
            value={draft.campaignNum ?? ''}
            data-testid="campaign"
            onChange={(e) =>
              patchDraft({ campaignNum: e.target.value === '' ? null : Number(e.target.value) })
            }
          >
            <option value="">{t('details.none')}</option>
            {campaigns.map((c) => (
              <option key={c.campaignNum} value={c.campaignNum}>
                {c.friendlyName || c.name || c.campaignNum}
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
      <label className="inline">
        <input
          type="checkbox"
          checked={draft.split}
          data-testid="split"
          onChange={(e) =>
            patchDraft({
              split: e.target.checked,
              parts: e.target.checked ? [{ reasonNum: null, amountText: '' }] : [],
            })
          }
        />
        {t('details.split')}
      </label>
      {draft.split ? (
        <fieldset>
          {draft.parts.map((p, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: parts have no identity but their place
            <div className="row" key={i}>
              <label className="inline">
                {t('details.reason')}
                <select
                  value={p.reasonNum ?? ''}
                  data-testid={`part-reason-${i}`}
                  onChange={(e) => {
                    const parts = [...draft.parts];
                    parts[i] = { ...p, reasonNum: e.target.value === '' ? null : Number(e.target.value) };
                    patchDraft({ parts });
                  }}
                >
                  <option value="">—</option>
                  {reasonOptions}
                </select>
              </label>
              <Field
                label={t('details.partAmount')}
                value={p.amountText}
                inputMode="decimal"
                dir="ltr"
                testId={`part-amount-${i}`}
                onChange={(v) => {
                  const parts = [...draft.parts];
                  parts[i] = { ...p, amountText: v };
                  patchDraft({ parts });
                }}
              />
              <button
                type="button"
                onClick={() => patchDraft({ parts: draft.parts.filter((_, j) => j !== i) })}
              >
                {t('details.removePart')}
              </button>
            </div>
          ))}
          <button
            type="button"
            onClick={() => patchDraft({ parts: [...draft.parts, { reasonNum: null, amountText: '' }] })}
          >
            {t('details.addPart')}
          </button>
          <p data-testid="split-remaining" className={errors.split ? 'field-error' : 'muted'}>
            {t('details.remaining', { amount: money(total - assigned, draft.currency, lang) })}
            {errors.split ? ` — ${t(errors.split.key)}` : ''}
          </p>
        </fieldset>
      ) : null}
      <Field
        label={t('details.note')}
        value={draft.note}
        onChange={(v) => patchDraft({ note: v })}
        maxLength={2000}
      />
      {draft.recurring ? (
        <fieldset data-testid="schedule">
          <legend>{t('schedule.title')}</legend>
          <div className="row">
            <label className="inline">
              {t('schedule.frequency')}
              <select
                value={draft.schedule.frequency}
                data-testid="frequency"
                onChange={(e) =>
                  patchDraft({ schedule: { ...draft.schedule, frequency: e.target.value as Frequency } })
                }
              >
                {FREQUENCIES.filter((f) => f !== 'Special_Days').map((f) => (
                  <option key={f} value={f}>
                    {t(`frequency.${f}`)}
                  </option>
                ))}
              </select>
            </label>
            <Field
              label={t('schedule.count')}
              value={draft.schedule.countText}
              inputMode="numeric"
              dir="ltr"
              error={errors.count}
              testId="schedule-count"
              onChange={(v) => patchDraft({ schedule: { ...draft.schedule, countText: v } })}
            />
            <Field
              label={t('schedule.startDate')}
              type="date"
              value={draft.schedule.startDate}
              error={errors.startDate}
              testId="schedule-start"
              onChange={(v) => patchDraft({ schedule: { ...draft.schedule, startDate: v } })}
            />
          </div>
          {Number.isInteger(count) && count > 0 ? (
            <p>{t('schedule.perPayment', { count, amount: money(total, draft.currency, lang) })}</p>
          ) : null}
          {preview ? (
            <table className="preview" data-testid="schedule-preview">
              <caption>{t('schedule.preview')}</caption>
              <thead>
                <tr>
                  <th>#</th>
                  <th>{t('schedule.civil')}</th>
                  <th>{t('schedule.hebrew')}</th>
                  <th>{t('schedule.amount')}</th>
                </tr>
              </thead>
              <tbody>
                {preview.slice(0, PREVIEW_ROWS).map((row) => (
                  <tr key={row.sequence}>
                    <td>{row.sequence}</td>
                    <td>{civilDate(row.dueDate, lang)}</td>
                    <td data-testid="hebrew-date">{lang === 'he' ? row.hebrewDateHebrew : row.hebrewDate}</td>
                    <td>{money(row.amountMinor, draft.currency, lang)}</td>
                  </tr>
                ))}
              </tbody>
              {preview.length > PREVIEW_ROWS ? (
                <tfoot>
                  <tr>
                    <td colSpan={4}>{t('schedule.moreRows', { count: preview.length - PREVIEW_ROWS })}</td>
                  </tr>
                </tfoot>
              ) : null}
            </table>
          ) : null}
        </fieldset>
      ) : null}
      <div className="actions">
        <button type="button" onClick={() => go('donor')}>
          {t('nav.back')}
        </button>
        <button
          type="button"
          className="primary"
          data-testid="details-next"
          disabled={!valid}
          onClick={() => go('review')}
        >
          {t('nav.next')}
        </button>
      </div>
    </section>
  );
}
