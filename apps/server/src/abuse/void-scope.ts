/**
 * Who may void what: an API key (the organisation's back office) any payment of its organisation;
 * a source credential (an external source GUID or a device's credential) only the payments made
 * through that same source. A source GUID sits in public donation forms and a device's credential in
 * a terminal: neither may void other sources' payments (e.g. to hide card-testing charges).
 */
import { ERROR_CODES } from '@kupah/contracts';
import type { Caller } from '../auth/repo.ts';
import type { Sql } from '../db/database.ts';
import { ApiError } from '../http/errors.ts';

/** 403 unless `caller` may void the payment `paymentId` (of the caller's organisation). */
export async function assertMayVoid(
  sql: Sql,
  caller: Pick<Caller, 'type' | 'id' | 'org'>,
  payment: { id: number; receiptNum: string },
): Promise<void> {
  if (caller.type === 'apiKey') return;
  const [row] = await sql.query<{ source_id: string | number | null }>(
    'SELECT source_id FROM payments WHERE id = $1 AND org_id = $2',
    [payment.id, caller.org.id],
  );
  if (row?.source_id != null && Number(row.source_id) === caller.id) return;
  throw new ApiError(
    403,
    ERROR_CODES.FORBIDDEN,
    `Payment ${payment.receiptNum} was not made through this credential: a source or device may void only ` +
      'its own payments (an API key of the organisation may void any)',
  );
}
