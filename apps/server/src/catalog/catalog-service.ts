/**
 * SaveReason / SaveCampaign (4.4, 4.5): number 0 creates, an existing number updates. An update
 * keeps what it does not send, as SaveDonor does: a field absent or null keeps the stored value, an
 * empty string deletes an optional field, and `campaignNum: 0` removes a reason's campaign lock. A
 * name can be replaced (by the other name too) but the record never ends up with no name.
 */
import type { CampaignRecord, ReasonRecord, SaveCampaignCommand, SaveReasonCommand } from '@kupah/contracts';
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, validationError } from '../http/errors.ts';
import { assertSameOrg } from '../payments/payment-service.ts';
import {
  type Campaign,
  findCampaign,
  insertCampaign,
  insertReason,
  lockCampaign,
  lockReason,
  type Reason,
  type ReasonFields,
  updateCampaign,
  updateReason,
} from './repo.ts';

const clean = (s: string | null | undefined): string | null =>
  s == null || s.trim() === '' ? null : s.trim();

/** A sent text field applied to the stored value: absent or null keeps it, '' deletes it. */
const patched = (sent: string | null | undefined, stored: string | null): string | null =>
  sent == null ? stored : clean(sent);

function assertNamed(first: string | null, second: string | null, field: string, message: string): void {
  if (first === null && second === null) throw validationError([{ field, message }]);
}

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
    // 0 means "no campaign" (removes a lock on update); absent or null keeps the stored lock.
    const sentCampaign = cmd.campaignNum;
    if (sentCampaign && !(await findCampaign(tx, orgId, sentCampaign))) {
      throw new ApiError(400, ERROR_CODES.VALIDATION_FAILED, 'CampaignNum is invalid', [
        { field: 'campaignNum', message: 'CampaignNum is invalid' },
      ]);
    }
    const stored = cmd.reasonNumber === 0 ? null : await lockReason(tx, orgId, cmd.reasonNumber);
    if (cmd.reasonNumber !== 0 && !stored) throw notFound(`Reason ${cmd.reasonNumber}`);
    const fields: ReasonFields = {
      name: patched(cmd.reasonName, stored?.name ?? null),
      nameHebrew: patched(cmd.reasonNameHebrew, stored?.nameHebrew ?? null),
      homePhone: patched(cmd.homePhoneNumber, stored?.homePhone ?? null),
      cellPhone: patched(cmd.cellPhoneNum, stored?.cellPhone ?? null),
      email: patched(cmd.email, stored?.email ?? null),
      campaignNumber: sentCampaign == null ? (stored?.campaignNumber ?? null) : sentCampaign || null,
    };
    assertNamed(fields.name, fields.nameHebrew, 'reasonName', 'reasonName or reasonNameHebrew is required');
    if (!stored) return reasonRecord(caller.org.guid, await insertReason(tx, orgId, fields));
    return reasonRecord(caller.org.guid, (await updateReason(tx, orgId, cmd.reasonNumber, fields))!);
  });
}

export async function saveCampaign(
  deps: Deps,
  caller: Caller,
  cmd: SaveCampaignCommand,
): Promise<CampaignRecord> {
  assertSameOrg(caller, cmd.orgGuid);
  const orgId = caller.org.id;
  return deps.db.transaction(async (tx) => {
    const stored = cmd.campaignNumber === 0 ? null : await lockCampaign(tx, orgId, cmd.campaignNumber);
    if (cmd.campaignNumber !== 0 && !stored) throw notFound(`Campaign ${cmd.campaignNumber}`);
    const fields = {
      name: patched(cmd.campaignName, stored?.name ?? null),
      friendlyName: patched(cmd.campaignFriendlyName, stored?.friendlyName ?? null),
    };
    assertNamed(
      fields.name,
      fields.friendlyName,
      'campaignName',
      'campaignName or campaignFriendlyName is required',
    );
    if (!stored) return campaignRecord(caller.org.guid, await insertCampaign(tx, orgId, fields));
    return campaignRecord(caller.org.guid, (await updateCampaign(tx, orgId, cmd.campaignNumber, fields))!);
  });
}
