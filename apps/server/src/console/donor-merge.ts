/**
 * Merge two donors of an organisation: the merged donor's payments and schedules move to the kept
 * donor in one transaction, and the merge is recorded (who, when, the merged donor's account
 * number, what moved). The merged donor's row stays, marked `merged_into`: its account number is
 * kept in history and still names someone; it cannot be merged again or take part in a merge.
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { Deps } from '../deps.ts';
import { ApiError, notFound, validationError } from '../http/errors.ts';
import { insertDonorMerge, lockDonorPair, markDonorMerged, moveDonorRecords } from './donor-merge-repo.ts';

export interface DonorMergeResult {
  kept: string;
  merged: string;
  paymentsMoved: number;
  schedulesMoved: number;
  mergedAt: string;
}

export async function mergeDonors(
  deps: Deps,
  orgId: number,
  by: string,
  keep: string,
  merge: string,
): Promise<DonorMergeResult> {
  if (keep.trim().toUpperCase() === merge.trim().toUpperCase()) {
    throw validationError([{ field: 'merge', message: 'must be another donor than keep' }]);
  }
  const at = deps.now();
  return deps.db.transaction(async (tx) => {
    const pair = await lockDonorPair(tx, orgId, [keep.trim(), merge.trim()]);
    const find = (num: string) => pair.find((p) => p.accountNum.toUpperCase() === num.trim().toUpperCase());
    const kept = find(keep);
    const merged = find(merge);
    if (!kept) throw notFound(`Donor ${keep}`);
    if (!merged) throw notFound(`Donor ${merge}`);
    for (const [field, d] of [
      ['keep', kept],
      ['merge', merged],
    ] as const) {
      if (d.mergedInto !== null) {
        throw new ApiError(
          409,
          ERROR_CODES.INVALID_STATE,
          `Donor ${d.accountNum} was merged into another donor`,
          [{ field, message: 'was merged into another donor already' }],
        );
      }
    }
    const moved = await moveDonorRecords(tx, orgId, merged.id, kept.id);
    await markDonorMerged(tx, orgId, merged.id, kept.id, at);
    await insertDonorMerge(tx, {
      orgId,
      keptId: kept.id,
      mergedId: merged.id,
      mergedAccountNum: merged.accountNum,
      payments: moved.payments,
      schedules: moved.schedules,
      by,
      at,
    });
    return {
      kept: kept.accountNum,
      merged: merged.accountNum,
      paymentsMoved: moved.payments,
      schedulesMoved: moved.schedules,
      mergedAt: at.toISOString(),
    };
  });
}
