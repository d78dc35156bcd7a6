/**
 * Who and what a payment is for: the donor (linked, matched or created), the campaign, the reason
 * or split across reasons, and the collector. Unknown references are 400s naming the field.
 */
import { type ChargeCommand, toMinorUnits } from '@kupah/contracts';
import {
  type Campaign,
  findCampaign,
  findCampaignByName,
  findReason,
  findReasonByName,
  insertCampaign,
  insertReason,
  type Reason,
} from '../catalog/repo.ts';
import type { Sql } from '../db/database.ts';
import { ApiError, validationError } from '../http/errors.ts';
import { findDonorByContact, findPerson, insertPerson, type Person } from '../people/repo.ts';

export interface Parties {
  donor: Person | null;
  donorCreated: boolean;
  campaign: Campaign | null;
  reasons: { reason: Reason; amountMinor: number }[];
  collector: Person | null;
}

type PartyInput = Pick<ChargeCommand, 'donor' | 'campaign' | 'reason' | 'reasons' | 'collectorId'>;

const ACCOUNT = /^D\d{1,15}$/i;
const blank = (s: string | null | undefined): s is null | undefined => s == null || s.trim() === '';

export async function resolveParties(
  tx: Sql,
  orgId: number,
  input: PartyInput,
  amountMinor: number,
): Promise<Parties> {
  const { donor, created } = await resolveDonor(tx, orgId, input.donor);
  let campaign = await resolveCampaign(tx, orgId, input.campaign);
  const reasons: Parties['reasons'] = [];
  if (input.reasons) {
    for (const [i, part] of input.reasons.entries()) {
      const reason = await resolveReason(tx, orgId, part.reasonNum, part.reasonName, `reasons.${i}`);
      reasons.push({ reason, amountMinor: toMinorUnits(part.reasonAmount) });
    }
  } else if (input.reason && (input.reason.reasonNum != null || !blank(input.reason.reasonName))) {
    const reason = await resolveReason(tx, orgId, input.reason.reasonNum, input.reason.reasonName, 'reason');
    reasons.push({ reason, amountMinor });
  }
  for (const [i, { reason }] of reasons.entries()) {
    if (reason.campaignNumber === null) continue;
    const field = input.reasons ? `reasons.${i}.reasonNum` : 'reason.reasonNum';
    if (campaign && campaign.number !== reason.campaignNumber) {
      throw validationError([
        {
          field,
          message: `reason ${reason.number} is locked to campaign ${reason.campaignNumber}, not ${campaign.number}`,
        },
      ]);
    }
    campaign ??= await findCampaign(tx, orgId, reason.campaignNumber);
  }
  const seen = new Set<number>();
  for (const [i, { reason }] of reasons.entries()) {
    if (seen.has(reason.id))
      throw validationError([{ field: `reasons.${i}`, message: 'the same reason appears twice' }]);
    seen.add(reason.id);
  }
  let collector: Person | null = null;
  if (!blank(input.collectorId)) {
    collector = await findPerson(tx, 'collector', orgId, input.collectorId.trim());
    if (!collector)
      throw validationError([{ field: 'collectorId', message: `no collector ${input.collectorId}` }]);
  }
  return { donor, donorCreated: created, campaign, reasons, collector };
}

async function resolveDonor(
  tx: Sql,
  orgId: number,
  d: ChargeCommand['donor'],
): Promise<{ donor: Person | null; created: boolean }> {
  if (!d) return { donor: null, created: false };
  const english = !blank(d.firstName) && !blank(d.lastName);
  const hebrew = !blank(d.firstNameHebrew) && !blank(d.lastNameHebrew);
  const phoneDigits = blank(d.phoneNumber) ? null : d.phoneNumber.replace(/\D/g, '') || null;
  const email = blank(d.email) ? null : d.email.trim();
  const fields = {
    title: null,
    firstName: blank(d.firstName) ? null : d.firstName.trim(),
    lastName: blank(d.lastName) ? null : d.lastName.trim(),
    titleHebrew: null,
    firstNameHebrew: blank(d.firstNameHebrew) ? null : d.firstNameHebrew.trim(),
    lastNameHebrew: blank(d.lastNameHebrew) ? null : d.lastNameHebrew.trim(),
    suffixHebrew: null,
    phones: phoneDigits
      ? [{ phoneLabel: 'Phone', phoneNumber: d.phoneNumber!.trim(), countryCode: null }]
      : [],
    emails: email ? [{ emailLabel: 'Email', emailAddress: email }] : [],
    addresses: [],
  };
  if (!blank(d.accountNum)) {
    const accountNum = d.accountNum.trim();
    const found = await findPerson(tx, 'donor', orgId, accountNum);
    if (found) return { donor: found, created: false };
    if (!ACCOUNT.test(accountNum)) {
      throw validationError([
        { field: 'donor.accountNum', message: `no donor ${accountNum} in this organisation` },
      ]);
    }
    if (!english && !hebrew) {
      throw validationError([
        {
          field: 'donor.accountNum',
          message: `no donor ${accountNum}; send a first and last name to create one`,
        },
      ]);
    }
    return { donor: await insertPerson(tx, 'donor', orgId, accountNum.toUpperCase(), fields), created: true };
  }
  if (!english && !hebrew) {
    if (Object.values(d).every((v) => blank(v))) return { donor: null, created: false };
    throw validationError([
      {
        field: 'donor.firstName',
        message: 'a donor needs an accountNum, or a first and last name (English or Hebrew)',
      },
    ]);
  }
  if (phoneDigits || email) {
    const names = english
      ? { first: fields.firstName!, last: fields.lastName!, hebrew: false }
      : { first: fields.firstNameHebrew!, last: fields.lastNameHebrew!, hebrew: true };
    const match = await findDonorByContact(tx, orgId, names, { phoneDigits, email });
    if (match) return { donor: match, created: false };
  }
  return { donor: await insertPerson(tx, 'donor', orgId, null, fields), created: true };
}

async function resolveCampaign(
  tx: Sql,
  orgId: number,
  c: ChargeCommand['campaign'],
): Promise<Campaign | null> {
  if (!c) return null;
  if (c.campaignNum != null) {
    const found = await findCampaign(tx, orgId, c.campaignNum);
    if (!found) throw validationError([{ field: 'campaign.campaignNum', message: 'CampaignNum is invalid' }]);
    return found;
  }
  if (blank(c.campaignName)) return null;
  const name = c.campaignName.trim();
  return (
    (await findCampaignByName(tx, orgId, name)) ??
    (await insertCampaign(tx, orgId, { name, friendlyName: null }))
  );
}

async function resolveReason(
  tx: Sql,
  orgId: number,
  num: number | null | undefined,
  name: string | null | undefined,
  field: string,
): Promise<Reason> {
  if (num != null) {
    const found = await findReason(tx, orgId, num);
    if (!found) throw validationError([{ field: `${field}.reasonNum`, message: 'ReasonNum is invalid' }]);
    return found;
  }
  if (blank(name)) {
    throw new ApiError(400, 'VALIDATION_FAILED', `${field} needs reasonNum or reasonName`, [
      { field: `${field}.reasonNum`, message: 'reasonNum or reasonName is required' },
    ]);
  }
  const n = name.trim();
  return (
    (await findReasonByName(tx, orgId, n)) ??
    (await insertReason(tx, orgId, {
      name: n,
      nameHebrew: null,
      homePhone: null,
      cellPhone: null,
      email: null,
      campaignNumber: null,
    }))
  );
}
