/**
 * Webhook bodies (section 6) built from what was committed, with exactly the table spellings.
 * Pure: the caller writes them to the outbox in the same transaction.
 */
import type { PaymentWebhook, ScheduleWebhook, VoidWebhook } from '@kupah/contracts';
import type { Campaign, Reason } from '../catalog/repo.ts';
import type { Person } from '../people/repo.ts';

export interface DeviceFacts {
  deviceName: string | null;
  timezone: string | null;
  deviceCreatedDate: string | null;
  location: { locationName: string | null; longitude: string | null; latitude: string | null } | null;
}

export interface PaymentFacts {
  orgGuid: string;
  receiptNum: string;
  processedAt: string;
  amountMinor: number;
  currency: string;
  method: string;
  token: string | null;
  maskedCredential: string;
  gatewayName: string;
  gatewayRef: string | null;
  brand: string | null;
  last4: string | null;
  cardHolderName: string | null;
  isAnonymous: boolean;
  device: DeviceFacts;
  donor: Person | null;
  donorCreated: boolean;
  campaign: Campaign | null;
  reasons: Reason[];
  collector: Person | null;
}

export const money = (minor: number): string => (minor / 100).toFixed(2);

/** Numeric part of an account number (`D100042` → 100042). */
export const accountNumber = (accountNum: string): number => Number(accountNum.replace(/^\D+/, ''));

/** A person's name: the English pair, else the Hebrew one ('' when neither is known). */
export const personName = (
  p: Pick<Person, 'firstName' | 'lastName' | 'firstNameHebrew' | 'lastNameHebrew'>,
): string =>
  [p.firstName, p.lastName].filter(Boolean).join(' ') ||
  [p.firstNameHebrew, p.lastNameHebrew].filter(Boolean).join(' ');

function collectorInfo(c: Person | null): PaymentWebhook['collectorInfo'] {
  return c ? { collectorNumber: accountNumber(c.accountNum), collectorName: personName(c) } : {};
}

function locationInfo(d: DeviceFacts): PaymentWebhook['locationInfo'] {
  return d.location ? { ...d.location } : {};
}

export function paymentWebhookBody(p: PaymentFacts): PaymentWebhook {
  return {
    orgGuid: p.orgGuid,
    processedDateTime: p.processedAt,
    amount: money(p.amountMinor),
    token: p.token,
    maskedApiKey: p.maskedCredential,
    gatewayName: p.gatewayName,
    last4Digits: p.last4,
    brand: p.brand,
    paymentNumber: p.receiptNum,
    gatewayRefNum: p.gatewayRef,
    paymentMethod: p.method,
    currency: p.currency,
    deviceName: p.device.deviceName,
    deviceCreatedDate: p.device.deviceCreatedDate,
    timezone: p.device.timezone,
    cardHolderName: p.cardHolderName,
    isAnonymousDonation: p.isAnonymous,
    paymentStatus: 'Success',
    donorInfo: {
      donorNumber: p.donor?.accountNum ?? null,
      ...(p.donor && p.donorCreated
        ? {
            newDonor: {
              donorID: p.donor.accountNum,
              firstName: p.donor.firstName ?? p.donor.firstNameHebrew,
              lastName: p.donor.lastName ?? p.donor.lastNameHebrew,
            },
          }
        : {}),
    },
    campaignInfo: p.campaign
      ? [{ campaignNumber: p.campaign.number, campaignName: p.campaign.name ?? p.campaign.friendlyName }]
      : [],
    reasonInfo: p.reasons.map((r) => ({ reasonNumber: r.number, reasonName: r.name ?? r.nameHebrew })),
    collectorInfo: collectorInfo(p.collector),
    locationInfo: locationInfo(p.device),
  };
}

export interface ScheduleFacts {
  orgGuid: string;
  scheduleNum: number;
  totalMinor: number;
  count: number;
  frequency: string;
  startDate: string;
  currency: string;
  donor: Person | null;
  donorCreated: boolean;
  campaign: Campaign | null;
  reason: Reason | null;
  collector: Person | null;
  device: DeviceFacts;
  firstPayment: PaymentFacts | null;
}

export function scheduleWebhookBody(s: ScheduleFacts): ScheduleWebhook {
  const fp = s.firstPayment;
  return {
    orgGuid: s.orgGuid,
    scheduleUniqueID: String(s.scheduleNum),
    totalScheduleAmount: money(s.totalMinor),
    countOfSchedules: String(s.count),
    frequency: s.frequency,
    scheduleStartDate: `${s.startDate}T00:00:00`,
    currency: s.currency,
    donorInfo: {
      donorNumber: s.donor?.accountNum ?? null,
      ...(s.donor && s.donorCreated
        ? {
            newDonor: {
              DonorID: s.donor.accountNum,
              FirstName: s.donor.firstName ?? s.donor.firstNameHebrew,
              LastName: s.donor.lastName ?? s.donor.lastNameHebrew,
            },
          }
        : {}),
    },
    campaignInfo: s.campaign
      ? { campaignNumber: s.campaign.number, campaignName: s.campaign.name ?? s.campaign.friendlyName }
      : {},
    reasonInfo: s.reason
      ? { reasonNumber: s.reason.number, reasonName: s.reason.name ?? s.reason.nameHebrew }
      : {},
    collectorInfo: collectorInfo(s.collector),
    locationInfo: locationInfo(s.device),
    ...(fp
      ? {
          firstPayment: {
            processedDateTime: fp.processedAt,
            amount: money(fp.amountMinor),
            maskedApiKey: fp.maskedCredential,
            gatewayName: fp.gatewayName,
            brand: fp.brand,
            paymentNumber: fp.receiptNum,
            gatewayRefNum: fp.gatewayRef,
            paymentMethod: fp.method,
            deviceName: fp.device.deviceName,
            deviceCreatedDate: fp.device.deviceCreatedDate,
            timezone: fp.device.timezone,
            cardHolderName: fp.cardHolderName,
            isAnonymousDonation: fp.isAnonymous,
          },
        }
      : {}),
  };
}

export function voidWebhookBody(orgGuid: string, receiptNum: string, at: string): VoidWebhook {
  return { orgGuid, statusDateTime: at, paymentNumber: receiptNum, paymentStatus: 'Voided' };
}

/**
 * A refund's void webhook (decisions: the void webhook carries the new status): the void webhook's
 * four fields with `Refunded` or `PartiallyRefunded`, and (extension) the amounts and the reason.
 */
export function refundWebhookBody(r: {
  orgGuid: string;
  receiptNum: string;
  at: string;
  status: 'Refunded' | 'PartiallyRefunded';
  amountMinor: number;
  refundMinor: number;
  refundedMinor: number;
  currency: string;
  reason: string | null;
}): VoidWebhook {
  return {
    orgGuid: r.orgGuid,
    statusDateTime: r.at,
    paymentNumber: r.receiptNum,
    paymentStatus: r.status,
    amount: money(r.amountMinor),
    refundAmount: money(r.refundMinor),
    refundedAmount: money(r.refundedMinor),
    currency: r.currency,
    refundReason: r.reason,
  };
}
