/** SQL of merging two donors (console/donor-merge.ts). Every statement names the organisation. */
import type { Sql } from '../db/database.ts';

export interface MergeParty {
  id: number;
  accountNum: string;
  mergedInto: number | null;
}

/** Both donors locked (in id order, so two merges of the same pair cannot deadlock), by account number. */
export async function lockDonorPair(
  tx: Sql,
  orgId: number,
  accountNums: [string, string],
): Promise<MergeParty[]> {
  const rows = await tx.query<{ id: string; account_num: string; merged_into: string | null }>(
    `SELECT id, account_num, merged_into FROM donors
     WHERE org_id = $1 AND upper(account_num) IN (upper($2), upper($3)) ORDER BY id FOR UPDATE`,
    [orgId, accountNums[0], accountNums[1]],
  );
  return rows.map((r) => ({
    id: Number(r.id),
    accountNum: r.account_num,
    mergedInto: r.merged_into === null ? null : Number(r.merged_into),
  }));
}

/** Move the merged donor's payments and schedules to the kept donor; how many of each moved. */
export async function moveDonorRecords(
  tx: Sql,
  orgId: number,
  fromId: number,
  toId: number,
): Promise<{ payments: number; schedules: number }> {
  const payments = await tx.query(
    'UPDATE payments SET donor_id = $3 WHERE org_id = $1 AND donor_id = $2 RETURNING id',
    [orgId, fromId, toId],
  );
  const schedules = await tx.query(
    'UPDATE schedules SET donor_id = $3, updated_at = now() WHERE org_id = $1 AND donor_id = $2 RETURNING id',
    [orgId, fromId, toId],
  );
  return { payments: payments.length, schedules: schedules.length };
}

/** Mark the merged donor (it stays, so its account number still leads to the kept one). */
export async function markDonorMerged(
  tx: Sql,
  orgId: number,
  mergedId: number,
  keptId: number,
  at: Date,
): Promise<void> {
  await tx.query(
    'UPDATE donors SET merged_into = $3, merged_at = $4, updated_at = now() WHERE org_id = $1 AND id = $2',
    [orgId, mergedId, keptId, at.toISOString()],
  );
  // The kept donor changes too: terminals pull it again (change_xid) with its history.
  await tx.query('UPDATE donors SET updated_at = now() WHERE org_id = $1 AND id = $2', [orgId, keptId]);
}

export async function insertDonorMerge(
  tx: Sql,
  m: {
    orgId: number;
    keptId: number;
    mergedId: number;
    mergedAccountNum: string;
    payments: number;
    schedules: number;
    by: string;
    at: Date;
  },
): Promise<void> {
  await tx.query(
    `INSERT INTO donor_merges (org_id, kept_donor_id, merged_donor_id, merged_account_num, payments_moved,
       schedules_moved, merged_by, merged_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [m.orgId, m.keptId, m.mergedId, m.mergedAccountNum, m.payments, m.schedules, m.by, m.at.toISOString()],
  );
}

/** The donors merged into this one, newest first. */
export async function listDonorMerges(sql: Sql, orgId: number, keptId: number) {
  const rows = await sql.query<{
    merged_account_num: string;
    payments_moved: number;
    schedules_moved: number;
    merged_by: string;
    merged_at: Date | string;
  }>(
    `SELECT merged_account_num, payments_moved, schedules_moved, merged_by, merged_at FROM donor_merges
     WHERE org_id = $1 AND kept_donor_id = $2 ORDER BY merged_at DESC, id DESC`,
    [orgId, keptId],
  );
  return rows.map((r) => ({
    accountNum: r.merged_account_num,
    paymentsMoved: Number(r.payments_moved),
    schedulesMoved: Number(r.schedules_moved),
    mergedBy: r.merged_by,
    mergedAt: new Date(r.merged_at).toISOString(),
  }));
}

/** For each of these donor account numbers that was merged: the account number it was merged into. */
export async function mergedInto(
  sql: Sql,
  orgId: number,
  accountNums: string[],
): Promise<Map<string, string>> {
  if (accountNums.length === 0) return new Map();
  const rows = await sql.query<{ account_num: string; kept: string }>(
    `SELECT d.account_num, k.account_num AS kept FROM donors d JOIN donors k ON k.id = d.merged_into
     WHERE d.org_id = $1 AND d.account_num = ANY($2::text[])`,
    [orgId, accountNums],
  );
  return new Map(rows.map((r) => [r.account_num, r.kept]));
}
