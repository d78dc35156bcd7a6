/**
 * An in-memory `TerminalData` for the UI's component tests (no IndexedDB, no server): it keeps
 * what the screens hand it so a test can look, and answers with outcomes the test chooses. The
 * real layer is tested by its own tests and end to end.
 */

import type { DeviceSettings, RefCampaign, RefPerson, RefReason, TerminalBridge } from '@kupah/contracts';
import type { ShiftClose } from '@kupah/terminal-core';
import {
  DEFAULT_LOCAL_SETTINGS,
  type DonationEntry,
  isBeingConfirmed,
  type LocalSettings,
  type OutboxItem,
  OutboxRefusal,
  type Pairing,
  type QueueSummary,
  type SyncStatus,
  type TerminalData,
} from '@kupah/terminal-core';

export const TEST_LOCAL: LocalSettings = DEFAULT_LOCAL_SETTINGS;

export const TEST_DONORS: RefPerson[] = [
  {
    accountNum: 'D100',
    title: null,
    firstName: 'Rivka',
    lastName: 'Stern',
    firstNameHebrew: 'רבקה',
    lastNameHebrew: 'שטרן',
    phones: ['3055550123'],
    emails: ['rivka@example.org'],
  },
];
export const TEST_CAMPAIGNS: RefCampaign[] = [{ campaignNum: 1, name: 'Building Fund', friendlyName: null }];
export const TEST_REASONS: RefReason[] = [
  { reasonNum: 1, name: 'Kiddush', nameHebrew: 'קידוש', campaignNum: null },
  { reasonNum: 2, name: 'Torah fund', nameHebrew: 'קרן תורה', campaignNum: null },
];

export interface TestDataOptions {
  settings: DeviceSettings;
  paired?: boolean;
  local?: Partial<LocalSettings>;
  /**
   * What the server answers for an enqueued donation (default: nothing within the wait).
   * `confirming`: PAYMENT_PENDING, the outcome comes later (see `settle`).
   */
  outcome?: 'done' | 'declined' | 'queued' | 'confirming';
  items?: OutboxItem[];
  collectors?: RefPerson[];
  pairError?: Error;
}

export type TestTerminalData = TerminalData & {
  enqueued: DonationEntry[];
  voids: { receiptNum: string; reason: string | null }[];
  discarded: { id: string; reason: string }[];
  /** Items whose outcome the result screen showed. */
  seen: string[];
  /** Receipts asked for by e-mail on the result screen. */
  receiptRequests: { id: string; email: string; language: 'en' | 'he' }[];
  items: OutboxItem[];
  local(): LocalSettings;
  /** The server's later answer for an item: it changes, and the listeners hear of it. */
  settle(id: string, patch: Partial<OutboxItem>): void;
};

let seq = 0;

export function testItem(over: Partial<OutboxItem> = {}): OutboxItem {
  seq += 1;
  const created = new Date();
  return {
    id: `00000000-0000-4000-8000-${String(seq).padStart(12, '0')}`,
    localRef: `T-${String(seq).padStart(4, '0')}`,
    kind: 'charge',
    state: 'queued',
    createdAt: created.toISOString(),
    expiresAt: new Date(created.getTime() + 72 * 3_600_000).toISOString(),
    amountMinor: 1800,
    currency: 'USD',
    method: 'Credit_Card',
    display: { donorName: null, brand: 'Visa', last4: '4242', frequency: null, collectorAccountNum: null },
    request: {},
    kid: 'k1',
    attempts: 0,
    lastAttemptAt: null,
    result: null,
    receiptNum: null,
    scheduleNum: null,
    error: null,
    discardReason: null,
    ...over,
  };
}

const STATUS: SyncStatus = {
  online: true,
  phase: 'idle',
  progress: null,
  lastSyncAt: null,
  lastError: null,
  nextAttemptAt: null,
};

export function testTerminalData(o: TestDataOptions): TestTerminalData {
  let local: LocalSettings = { ...TEST_LOCAL, ...o.local };
  let pairing: Pairing | null =
    o.paired === false
      ? null
      : {
          serverUrl: 'http://127.0.0.1:1',
          deviceId: 'dev-1',
          settings: o.settings,
          encryptionKey: { kid: 'k1', jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } },
          pairedAt: new Date().toISOString(),
        };
  const items: OutboxItem[] = [...(o.items ?? [])];
  const listeners = new Set<() => void>();
  const notify = () => {
    for (const l of listeners) l();
  };
  const enqueued: DonationEntry[] = [];
  const voids: { receiptNum: string; reason: string | null }[] = [];
  const discarded: { id: string; reason: string }[] = [];
  const seen: string[] = [];
  const receiptRequests: { id: string; email: string; language: 'en' | 'he' }[] = [];
  const closes: ShiftClose[] = [];

  const data: TestTerminalData = {
    enqueued,
    voids,
    discarded,
    seen,
    receiptRequests,
    items,
    local: () => local,
    settle(id, patch) {
      const i = items.findIndex((x) => x.id === id);
      items[i] = { ...items[i]!, ...patch };
      notify();
    },
    getPairing: async () => pairing,
    async pair(serverUrl) {
      if (o.pairError) throw o.pairError;
      pairing = {
        serverUrl,
        deviceId: 'dev-1',
        settings: o.settings,
        encryptionKey: { kid: 'k1', jwk: { kty: 'EC', crv: 'P-256', x: 'x', y: 'y' } },
        pairedAt: new Date().toISOString(),
      };
      return pairing;
    },
    async unpair() {
      pairing = null;
    },
    getLocalSettings: async () => local,
    async saveLocalSettings(patch) {
      local = { ...local, ...patch };
      return local;
    },
    async enqueue(entry) {
      if (!pairing) throw new OutboxRefusal('NOT_PAIRED', 'not paired');
      enqueued.push(entry);
      const r = entry.request as { amount?: number | null; currency: string; paymentMethodId: string };
      const item = testItem({
        kind: entry.kind,
        amountMinor: Math.round((r.amount ?? 0) * 100),
        currency: r.currency as OutboxItem['currency'],
        method: r.paymentMethodId as OutboxItem['method'],
        display: { donorName: null, brand: null, last4: null, frequency: null, collectorAccountNum: null },
      });
      items.push(item);
      notify();
      return item;
    },
    async enqueueVoid(receiptNum, reason) {
      voids.push({ receiptNum, reason });
      const item = testItem({ kind: 'void', request: { receiptNum, reason }, currency: null, method: null });
      items.push(item);
      notify();
      return item;
    },
    async enqueueDonor(request) {
      const item = testItem({ kind: 'saveDonor', request, currency: null, method: null });
      items.push(item);
      return item;
    },
    async shiftSummary() {
      return {
        openedAt: '2026-03-01T08:00:00.000Z',
        at: new Date().toISOString(),
        totals: { succeeded: [], voided: [], declined: [], queued: [] },
      };
    },
    async closeShift(closedBy) {
      const close = {
        ...(await data.shiftSummary()),
        closeId: crypto.randomUUID(),
        closedBy,
        reportedAt: null,
        server: null,
      };
      closes.unshift(close);
      return close;
    },
    async listShiftCloses() {
      return closes;
    },
    async markOutcomeSeen(id) {
      seen.push(id);
    },
    async requestReceipt(id, email, language) {
      if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email.trim()))
        throw new OutboxRefusal('INVALID', 'Not an address');
      receiptRequests.push({ id, email: email.trim(), language });
      const i = items.findIndex((x) => x.id === id);
      const receipt = {
        email: email.trim(),
        language,
        requestedAt: new Date().toISOString(),
        state: 'pending' as const,
        inPush: null,
        error: null,
      };
      items[i] = { ...items[i]!, receipt };
      notify();
      return items[i]!;
    },
    async waitForResult(id) {
      const i = items.findIndex((x) => x.id === id);
      const item = items[i]!;
      if (o.outcome === 'done') items[i] = { ...item, state: 'done', receiptNum: 'R1001' };
      else if (o.outcome === 'declined')
        items[i] = { ...item, state: 'declined', error: { errorCode: 'DECLINED', message: 'Card declined' } };
      else if (o.outcome === 'confirming' && item.state === 'queued' && !item.error)
        items[i] = {
          ...item,
          attempts: 1,
          error: { errorCode: 'PAYMENT_PENDING', message: 'The card processor has not answered yet' },
        };
      return items[i]!;
    },
    listOutbox: async (filter) =>
      items
        .filter((i) => !filter?.states || filter.states.includes(i.state))
        .slice()
        .reverse()
        .slice(0, filter?.limit ?? 500),
    async summary(): Promise<QueueSummary> {
      const unsent = items.filter((i) => i.state === 'queued' || i.state === 'sending');
      const totals = (list: OutboxItem[]) => {
        const out: QueueSummary['pendingTotals'] = {};
        for (const i of list) if (i.currency) out[i.currency] = (out[i.currency] ?? 0) + i.amountMinor;
        return out;
      };
      const confirming = unsent.filter(isBeingConfirmed);
      return {
        pending: unsent.length,
        pendingTotals: totals(unsent),
        confirming: confirming.length,
        confirmingTotals: totals(confirming),
        declined: items.filter((i) => i.state === 'declined').length,
        expiringSoon: 0,
        expired: items.filter((i) => i.state === 'expired').length,
      };
    },
    async retry(id) {
      const item = items.find((i) => i.id === id);
      if (item?.kid)
        throw new OutboxRefusal('INVALID', 'enter the card again', [
          { field: 'card.ccNum', message: 'enter it again' },
        ]);
    },
    async retryWithInstrument(id) {
      const i = items.findIndex((x) => x.id === id);
      items[i] = { ...items[i]!, state: 'discarded', discardReason: 'retried' };
      const copy = testItem();
      items.push(copy);
      notify();
      return copy;
    },
    async discard(id, reason) {
      discarded.push({ id, reason });
      const i = items.findIndex((x) => x.id === id);
      items[i] = { ...items[i]!, state: 'discarded', discardReason: reason };
      notify();
    },
    onOutboxChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    searchDonors: async (q) =>
      TEST_DONORS.filter((d) =>
        [d.firstName, d.lastName, d.firstNameHebrew, d.lastNameHebrew, d.accountNum, ...d.phones]
          .filter(Boolean)
          .some((v) => v!.toLowerCase().includes(q.toLowerCase())),
      ),
    campaigns: async () => TEST_CAMPAIGNS,
    reasons: async () => TEST_REASONS,
    collectors: async () => o.collectors ?? [],
    syncNow: async () => {},
    syncStatus: () => STATUS,
    onSyncStatus: () => () => {},
    start: () => {},
    stop: () => {},
  };
  return data;
}

export function testBridge(over: Partial<TerminalBridge> = {}): TerminalBridge & { printed: unknown[] } {
  const printed: unknown[] = [];
  return {
    platform: 'web',
    appVersion: async () => 'test',
    hostName: async () => null,
    timeZone: () => 'America/New_York',
    location: async () => null,
    printReceipt: async (r) => {
      printed.push(r);
      return { printed: true };
    },
    secrets: null,
    setKiosk: async () => {},
    printed,
    ...over,
  };
}
