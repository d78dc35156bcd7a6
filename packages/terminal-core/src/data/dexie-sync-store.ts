/**
 * The sync loop's durable steps (`SyncStore`) on the terminal's Dexie database. Each step is one
 * transaction in `outbox-repo` / `reference-repo`; this module adds the session (pairing with the
 * credential revealed) and tells the outbox's listeners about every change.
 */

import type { TerminalBridge } from '@kupah/contracts';
import type { SyncSession, SyncStore } from '../sync/sync-store.ts';
import { revealCredential } from './credential-vault.ts';
import type { OutboxChanges } from './outbox-changes.ts';
import { applyResults, claimBatch, expireDue, failItems, queueStats, releaseBatch } from './outbox-repo.ts';
import { markReceipt, receiptsToSend } from './receipt-requests.ts';
import { applyPullPage } from './reference-repo.ts';
import { listShiftCloses, markShiftReported } from './shift.ts';
import { readKv, type TerminalDatabase, writeKv } from './terminal-database.ts';

export interface DexieSyncStore extends SyncStore {
  /** Forget the revealed credential (after pairing again or unpairing). */
  forgetCredential(): void;
}

export function createDexieSyncStore(
  db: TerminalDatabase,
  bridge: TerminalBridge,
  changes: OutboxChanges,
): DexieSyncStore {
  let revealed: { deviceId: string; credential: string } | null = null;

  return {
    forgetCredential() {
      revealed = null;
    },
    async session(): Promise<SyncSession | null> {
      const [pairing, stored, revoked, local] = await Promise.all([
        readKv(db, 'pairing'),
        readKv(db, 'credential'),
        readKv(db, 'revoked'),
        readKv(db, 'localSettings'),
      ]);
      if (!pairing || !stored) return null;
      if (revealed?.deviceId !== pairing.deviceId) {
        revealed = {
          deviceId: pairing.deviceId,
          credential: await revealCredential(stored, pairing.deviceId, bridge),
        };
      }
      return {
        serverUrl: pairing.serverUrl,
        deviceId: pairing.deviceId,
        credential: revealed.credential,
        revoked: revoked !== undefined,
        deviceName: local?.deviceName?.trim() || null,
      };
    },
    async expireDue(now) {
      const n = await expireDue(db, now);
      if (n > 0) changes.notify();
      return n;
    },
    queueStats: (deviceId) => queueStats(db, deviceId),
    async claimBatch(request) {
      const batch = await claimBatch(db, request);
      if (batch.length > 0) changes.notify();
      return batch;
    },
    async applyResults(results, encryptionKey) {
      await applyResults(db, results, encryptionKey);
      changes.notify();
    },
    async releaseBatch(opIds) {
      await releaseBatch(db, opIds);
      changes.notify();
    },
    async failOperations(failures) {
      await failItems(db, failures);
      changes.notify();
    },
    receiptsToSend: (deviceId) => receiptsToSend(db, deviceId),
    async markReceipt(id, email, outcome) {
      await markReceipt(db, id, email, outcome);
      changes.notify();
    },
    pullCursor: async () => (await readKv(db, 'pullCursor')) ?? null,
    async unreportedShiftCloses() {
      const [closes, pairing] = await Promise.all([listShiftCloses(db), readKv(db, 'pairing')]);
      if (!pairing) return [];
      return closes
        .filter((c) => c.reportedAt === null)
        .reverse()
        .map((c) => ({
          deviceId: pairing.deviceId,
          closeId: c.closeId,
          openedAt: c.openedAt,
          closedAt: c.at,
          closedBy: c.closedBy,
          totals: c.totals,
        }));
    },
    markShiftReported: (closeId, server, now) => markShiftReported(db, closeId, server, now),
    resetPullCursor: () => db.kv.delete('pullCursor'),
    applyPull: (page) => applyPullPage(db, page),
    markRevoked: (message, now) => writeKv(db, 'revoked', { at: now.toISOString(), message }),
    loadRunState: async () => (await readKv(db, 'syncState')) ?? null,
    saveRunState: (state) => writeKv(db, 'syncState', state),
  };
}
