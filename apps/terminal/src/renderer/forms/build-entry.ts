/** The donation being built → the `DonationEntry` the outbox takes (an External API body). */
import type { DeviceSettings } from '@kupah/contracts';
import type { DonationEntry } from '@kupah/terminal-core';
import type { Draft } from '../store/terminal-store.ts';
import { amountMinor, feeMinor, scheduleAmounts } from './validate.ts';

const major = (minor: number) => minor / 100;
const orNull = (s: string) => (s.trim() === '' ? null : s.trim());
/** A provider token as typed; a charity card number without its spaces and dashes. */
const charityNumber = (s: string) => (s.trim().startsWith('tok_') ? s.trim() : s.replace(/[\s-]/g, ''));

/** The amount charged (each payment of a schedule): what was typed plus the fee when covered. */
export function chargedMinor(d: Draft, settings: DeviceSettings): number {
  const base = amountMinor(d.amountText) ?? 0;
  return d.coverFee && settings.coverFeePercent > 0 ? base + feeMinor(base, settings.coverFeePercent) : base;
}

/** What the reason split must add up to: the charge, or a schedule's first payment. */
export function splitTargetMinor(d: Draft, settings: DeviceSettings): number {
  const per = chargedMinor(d, settings);
  if (!d.recurring) return per;
  return scheduleAmounts(d, per)?.firstMinor ?? per;
}

export function buildEntry(
  d: Draft,
  settings: DeviceSettings,
  swipe: { ccNum: string; expiry: string } | null,
  collectorAccountNum: string | null,
): DonationEntry {
  const per = chargedMinor(d, settings);
  const card =
    d.method === 'Credit_Card'
      ? swipe
        ? { ccNum: swipe.ccNum, expiry: swipe.expiry, cardHolderName: orNull(d.card.holder) }
        : {
            ccNum: d.card.ccNum.replace(/[\s-]/g, ''),
            expiry: d.card.expiry.trim(),
            cvv: d.card.cvv.trim(),
            cardHolderName: orNull(d.card.holder),
          }
      : d.method === 'ACH'
        ? null
        : { ccNum: charityNumber(d.charity.ccNum) };
  const bankAccount =
    d.method === 'ACH'
      ? {
          routingNum: d.bank.routingNum.replace(/\D/g, ''),
          accountNum: d.bank.accountNum.replace(/[\s-]/g, ''),
          accountType: d.bank.accountType,
          nameOnAccount: orNull(d.bank.holder),
        }
      : null;
  const donor =
    d.donor.mode === 'existing' && d.donor.existing
      ? { accountNum: d.donor.existing.accountNum }
      : d.donor.mode === 'new'
        ? {
            firstName: orNull(d.donor.firstName),
            lastName: orNull(d.donor.lastName),
            firstNameHebrew: orNull(d.donor.firstNameHebrew),
            lastNameHebrew: orNull(d.donor.lastNameHebrew),
            phoneNumber: orNull(d.donor.phone),
            email: orNull(d.donor.email),
          }
        : null;
  const common = {
    currency: d.currency,
    paymentMethodId: d.method,
    card,
    bankAccount,
    donor,
    isAnonymousDonation: d.donor.mode === 'anonymous' ? true : null,
    campaign: d.campaignNum === null ? null : { campaignNum: d.campaignNum },
    reason: !d.split && d.reasonNum !== null ? { reasonNum: d.reasonNum } : null,
    reasons: d.split
      ? d.parts.map((p) => ({ reasonNum: p.reasonNum, reasonAmount: major(amountMinor(p.amountText) ?? 0) }))
      : null,
    note: orNull(d.note),
    collectorId: collectorAccountNum,
  };
  if (!d.recurring)
    return { kind: 'charge', request: { ...common, amount: major(per) }, swiped: swipe !== null };
  const amounts = scheduleAmounts(d, per) ?? { count: 1, firstMinor: per, perMinor: per, totalMinor: per };
  return {
    kind: 'schedule',
    request: {
      ...common,
      amount: major(amounts.totalMinor),
      scheduleDetails: {
        frequencyID: d.schedule.frequency,
        startDate: d.schedule.startDate,
        totalPaymentsCount: amounts.count,
        amountPerPayment: major(amounts.perMinor),
        firstPaymentAmount: major(amounts.firstMinor),
        ...(d.schedule.frequency === 'Special_Days'
          ? {
              specialDays: {
                presets: d.schedule.specialPresets,
                ...(d.schedule.specialDates.length > 0 ? { dates: d.schedule.specialDates } : {}),
              },
            }
          : {}),
        ...(d.schedule.frequency === 'Annually_Hebrew'
          ? { anniversaryRule: d.schedule.anniversaryRule }
          : {}),
      },
    },
    swiped: swipe !== null,
  };
}
