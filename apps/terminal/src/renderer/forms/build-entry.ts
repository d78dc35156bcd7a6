/** The donation being built → the `DonationEntry` the outbox takes (an External API body). */
import type { DeviceSettings } from '@kupah/contracts';
import type { DonationEntry } from '../data/terminal-data.ts';
import type { Draft } from '../store/terminal-store.ts';
import { amountMinor, feeMinor } from './validate.ts';

const major = (minor: number) => minor / 100;
const orNull = (s: string) => (s.trim() === '' ? null : s.trim());

/** The amount charged: what was typed plus the fee when the donor chose to cover it. */
export function chargedMinor(d: Draft, settings: DeviceSettings): number {
  const base = amountMinor(d.amountText) ?? 0;
  return d.coverFee && settings.coverFeePercent > 0 ? base + feeMinor(base, settings.coverFeePercent) : base;
}

export function buildEntry(
  d: Draft,
  settings: DeviceSettings,
  swipe: { ccNum: string; expiry: string } | null,
  collectorAccountNum: string | null,
): DonationEntry {
  const total = chargedMinor(d, settings);
  const card =
    d.method === 'Credit_Card'
      ? swipe
        ? { ccNum: swipe.ccNum, expiry: swipe.expiry, cardHolderName: orNull(d.card.holder) }
        : {
            ccNum: d.card.ccNum.replace(/[\s-]/g, ''),
            expiry: d.card.expiry,
            cvv: d.card.cvv,
            cardHolderName: orNull(d.card.holder),
          }
      : d.method === 'ACH'
        ? null
        : { ccNum: d.charity.ccNum.trim() };
  const bankAccount =
    d.method === 'ACH'
      ? {
          routingNum: d.bank.routingNum.replace(/\D/g, ''),
          accountNum: d.bank.accountNum.replace(/[\s-]/g, ''),
          accountType: d.bank.accountType,
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
    return { kind: 'charge', request: { ...common, amount: major(total) }, swiped: swipe !== null };
  const count = Number(d.schedule.countText);
  return {
    kind: 'schedule',
    request: {
      ...common,
      amount: major(total * count),
      scheduleDetails: {
        frequencyID: d.schedule.frequency,
        startDate: d.schedule.startDate,
        totalPaymentsCount: count,
        amountPerPayment: major(total),
      },
    },
    swiped: swipe !== null,
  };
}
