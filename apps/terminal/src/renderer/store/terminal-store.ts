/**
 * UI state of the terminal (zustand): which screen is showing, the donation being built, and
 * snapshots of the durable layer's status. Nothing durable lives here: a donation exists only
 * once `TerminalData.enqueue` has written it.
 */
import type { Currency, DeviceSettings, Frequency, PaymentMethodId, RefPerson } from '@kupah/contracts';
import { create } from 'zustand';
import type { LocalSettings, OutboxItem, QueueSummary, SyncStatus } from '../data/terminal-data.ts';

export type Screen =
  | 'pairing'
  | 'amount'
  | 'method'
  | 'donor'
  | 'details'
  | 'review'
  | 'result'
  | 'queue'
  | 'settings';

export interface DonorDraft {
  mode: 'none' | 'existing' | 'new' | 'anonymous';
  existing: RefPerson | null;
  firstName: string;
  lastName: string;
  firstNameHebrew: string;
  lastNameHebrew: string;
  phone: string;
  email: string;
}

export interface Draft {
  /** The amount as typed, in major units (`18`, `18.5`). */
  amountText: string;
  currency: Currency;
  coverFee: boolean;
  recurring: boolean;
  method: PaymentMethodId;
  card: { ccNum: string; expiry: string; cvv: string; holder: string };
  /** Set by a swipe: the number is kept here and never shown. */
  swiped: { brand: string; last4: string } | null;
  bank: { routingNum: string; accountNum: string; accountType: 'Checking' | 'Savings' };
  charity: { ccNum: string };
  donor: DonorDraft;
  campaignNum: number | null;
  reasonNum: number | null;
  split: boolean;
  parts: { reasonNum: number | null; amountText: string }[];
  note: string;
  schedule: { frequency: Frequency; countText: string; startDate: string };
}

export const emptyDonor = (): DonorDraft => ({
  mode: 'none',
  existing: null,
  firstName: '',
  lastName: '',
  firstNameHebrew: '',
  lastNameHebrew: '',
  phone: '',
  email: '',
});

export function emptyDraft(currency: Currency = 'USD', startDate = ''): Draft {
  return {
    amountText: '',
    currency,
    coverFee: false,
    recurring: false,
    method: 'Credit_Card',
    card: { ccNum: '', expiry: '', cvv: '', holder: '' },
    swiped: null,
    bank: { routingNum: '', accountNum: '', accountType: 'Checking' },
    charity: { ccNum: '' },
    donor: emptyDonor(),
    campaignNum: null,
    reasonNum: null,
    split: false,
    parts: [],
    note: '',
    schedule: { frequency: 'Monthly', countText: '12', startDate },
  };
}

const IDLE_STATUS: SyncStatus = {
  online: true,
  phase: 'idle',
  progress: null,
  lastSyncAt: null,
  lastError: null,
  nextAttemptAt: null,
};

export interface TerminalState {
  screen: Screen;
  draft: Draft;
  settings: DeviceSettings | null;
  local: LocalSettings | null;
  status: SyncStatus;
  summary: QueueSummary;
  /** The last donation's outbox item, for the result screen. */
  result: OutboxItem | null;
  go(screen: Screen): void;
  patchDraft(patch: Partial<Draft>): void;
  patchDonor(patch: Partial<DonorDraft>): void;
  /** Typed on the keypad or keyboard: digits, '.', 'back', 'clear'. */
  typeAmount(key: string): void;
  setAmountMinor(minor: number): void;
  startOver(): void;
  setSettings(settings: DeviceSettings | null): void;
  setLocal(local: LocalSettings): void;
  setStatus(status: SyncStatus): void;
  setSummary(summary: QueueSummary): void;
  setResult(item: OutboxItem | null): void;
}

const AMOUNT_TEXT = /^\d{0,7}(\.\d{0,2})?$/;

export const useTerminal = create<TerminalState>((set, get) => ({
  screen: 'pairing',
  draft: emptyDraft(),
  settings: null,
  local: null,
  status: IDLE_STATUS,
  summary: { pending: 0, pendingTotals: {}, declined: 0, expiringSoon: 0, expired: 0 },
  result: null,
  go: (screen) => set({ screen }),
  patchDraft: (patch) => set({ draft: { ...get().draft, ...patch } }),
  patchDonor: (patch) => set({ draft: { ...get().draft, donor: { ...get().draft.donor, ...patch } } }),
  typeAmount(key) {
    const current = get().draft.amountText;
    let next = current;
    if (key === 'clear') next = '';
    else if (key === 'back') next = current.slice(0, -1);
    else if (/^(\d|00|\.)$/.test(key)) next = current + key;
    if (next.startsWith('0') && next.length > 1 && next[1] !== '.') next = next.replace(/^0+/, '') || '0';
    if (next === '.') next = '0.';
    if (AMOUNT_TEXT.test(next)) set({ draft: { ...get().draft, amountText: next } });
  },
  setAmountMinor: (minor) =>
    set({ draft: { ...get().draft, amountText: (minor / 100).toFixed(2).replace(/\.00$/, '') } }),
  startOver() {
    const { settings } = get();
    set({
      draft: emptyDraft(settings?.currencies[0] ?? 'USD', ''),
      result: null,
      screen: settings ? 'amount' : 'pairing',
    });
  },
  setSettings: (settings) => set({ settings }),
  setLocal: (local) => set({ local }),
  setStatus: (status) => set({ status }),
  setSummary: (summary) => set({ summary }),
  setResult: (result) => set({ result }),
}));
