/** SaveReason / SaveCampaign (4.4, 4.5): number 0 creates, an existing number updates. */
import type { CampaignRecord, ReasonRecord, SaveCampaignCommand, SaveReasonCommand } from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound } from '../http/errors.ts';
import { assertSameOrg } from '../payments/payment-service.ts';
import {
  type Campaign,
  findCampaign,
  insertCampaign,
  insertReason,
  type Reason,
  type ReasonFields,
  updateCampaign,
  updateReason,
} from './repo.ts';

const clean = (s: string | null | undefined): string | null =>
  s == null || s.trim() === '' ? null : s.trim();

const reasonRecord = (orgGuid: string, r: Reason): ReasonRecord => ({
  orgGuid,
  reasonNumber: r.number,
  reasonName: r.name,
  reasonNameHebrew: r.nameHebrew,
  homePhoneNumber: r.homePhone,
  cellPhoneNum: r.cellPhone,
  email: r.email,
  campaignNum: r.campaignNumber,
});

const campaignRecord = (orgGuid: string, c: Campaign): CampaignRecord => ({
  orgGuid,
  campaignNumber: c.number,
  campaignName: c.name,
  campaignFriendlyName: c.friendlyName,
});

export async function saveReason(deps: Deps, caller: Caller, cmd: SaveReasonCommand): Promise<ReasonRecord> {
  assertSameOrg(caller, cmd.orgGuid);
  const orgId = caller.org.id;
  return deps.db.transaction(async (tx) => {
    const campaignNumber = cmd.campaignNum ? cmd.campaignNum : null;
    if (campaignNumber !== null && !(await findCampaign(tx, orgId, campaignNumber))) {
      throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, 'CampaignNum is invalid', [
        { field: 'campaignNum', message: 'CampaignNum is invalid' },
      ]);
    }
    const fields: ReasonFields = {
      name: clean(cmd.reasonName),
      nameHebrew: clean(cmd.reasonNameHebrew),
      homePhone: clean(cmd.homePhoneNumber),
      cellPhone: clean(cmd.cellPhoneNum),
      email: clean(cmd.email),
      campaignNumber,
    };
    if (cmd.reasonNumber === 0) return reasonRecord(caller.org.guid, await insertReason(tx, orgId, fields));
    const updated = await updateReason(tx, orgId, cmd.reasonNumber, fields);
    if (!updated) throw notFound(`Reason ${cmd.reasonNumber}`);
    return reasonRecord(caller.org.guid, updated);
  });
}

export async function saveCampaign(
  deps: Deps,
  caller: Caller,
  cmd: SaveCampaignCommand,
): Promise<CampaignRecord> {
  assertSameOrg(caller, cmd.orgGuid);
  const orgId = caller.org.id;
  const fields = { name: clean(cmd.campaignName), friendlyName: clean(cmd.campaignFriendlyName) };
  return deps.db.transaction(async (tx) => {
    if (cmd.campaignNumber === 0)
      return campaignRecord(caller.org.guid, await insertCampaign(tx, orgId, fields));
    const updated = await updateCampaign(tx, orgId, cmd.campaignNumber, fields);
    if (!updated) throw notFound(`Campaign ${cmd.campaignNumber}`);
    return campaignRecord(caller.org.guid, updated);
  });
}
