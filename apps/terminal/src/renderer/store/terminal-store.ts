/**
 * UI state of the terminal (zustand): which screen is showing, the donation being built, and
 * snapshots of the durable layer's status. Nothing durable lives here: a donation exists only
 * once `TerminalData.enqueue` has written it.
 */
import type {
  Currency,
  DeviceSettings,
  Frequency,
  PaymentMethodId,
  RefPerson,
  SPECIAL_DAY_PRESETS,
} from '@kupah/contracts';
import type { LocalSettings, OutboxItem, QueueSummary, SyncStatus } from '@kupah/terminal-core';
import { create } from 'zustand';

export type Screen =
  | 'pairing'
  | 'welcome'
  | 'amount'
  | 'method'
  | 'donor'
  | 'details'
  | 'review'
  | 'result'
  | 'queue'
  | 'settings'
  | 'shift';

export type Mode = LocalSettings['mode'];
export type SpecialDayPreset = (typeof SPECIAL_DAY_PRESETS)[number];

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

export interface ScheduleDraft {
  frequency: Frequency;
  /** Whether the cashier gives the number of payments or the total to collect. */
  by: 'count' | 'total';
  countText: string;
  /** The schedule's total in major units (when `by` is `total`). */
  totalText: string;
  /** `YYYY-MM-DD`; '' until the details screen sets today's date in the device's zone. */
  startDate: string;
  /** Special_Days only: kinds of day, and dates of the donor's own (YYYY-MM-DD). */
  specialPresets: SpecialDayPreset[];
  specialDates: string[];
  /**
   * Annually_Hebrew only: `anniversary` keeps the Hebrew date; `yahrzeit` follows the custom for a
   * yahrzeit (a death in Adar of an ordinary year is kept in Adar II in a leap year, etc.).
   */
  anniversaryRule: 'anniversary' | 'yahrzeit';
}

export interface Draft {
  /** The amount as typed, in major units (`18`, `18.5`). For a schedule: each payment. */
  amountText: string;
  currency: Currency;
  coverFee: boolean;
  recurring: boolean;
  method: PaymentMethodId;
  card: { ccNum: string; expiry: string; cvv: string; holder: string };
  /**
   * Set by a swipe: the number is held by the swipe capture and never shown. `errorKey` is the
   * message when the swiped card cannot be taken (expired, bad check digit).
   */
  swiped: { brand: string; last4: string; errorKey?: string | null } | null;
  bank: {
    routingNum: string;
    accountNum: string;
    /** The account number typed a second time (never sent: it must match). */
    accountConfirm: string;
    accountType: 'Checking' | 'Savings';
    holder: string;
    /** The donor agreed to the debit authorisation shown beside the account fields. */
    authorised: boolean;
  };
  charity: { ccNum: string };
  donor: DonorDraft;
  campaignNum: number | null;
  reasonNum: number | null;
  split: boolean;
  parts: { reasonNum: number | null; amountText: string }[];
  note: string;
  schedule: ScheduleDraft;
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
    bank: {
      routingNum: '',
      accountNum: '',
      accountConfirm: '',
      accountType: 'Checking',
      holder: '',
      authorised: false,
    },
    charity: { ccNum: '' },
    donor: emptyDonor(),
    campaignNum: null,
    reasonNum: null,
    split: false,
    parts: [],
    note: '',
    schedule: {
      frequency: 'Monthly',
      by: 'count',
      // Typed by the cashier: a schedule never runs 12 times because nobody looked.
      countText: '',
      totalText: '',
      startDate,
      specialPresets: [],
      specialDates: [],
      anniversaryRule: 'anniversary',
    },
  };
}

/**
 * The steps of a donation in each mode. The kiosk (donor self-service) starts at its welcome
 * screen and skips the campaign, reason and schedule step; the cashier and the collector go
 * through all of them.
 */
const FLOWS: Record<Mode, readonly Screen[]> = {
  cashier: ['amount', 'method', 'donor', 'details', 'review', 'result'],
  collector: ['amount', 'method', 'donor', 'details', 'review', 'result'],
  kiosk: ['welcome', 'amount', 'method', 'donor', 'review', 'result'],
};

/** The step after `screen` in `mode`'s flow (null at the end or off the flow). */
export function nextScreen(screen: Screen, mode: Mode): Screen | null {
  const flow = FLOWS[mode];
  const i = flow.indexOf(screen);
  return i < 0 || i >= flow.length - 2 ? null : (flow[i + 1] ?? null);
}

/** Where Escape/Back leads from `screen` (null: nowhere, e.g. the result or pairing). */
export function previousScreen(screen: Screen, mode: Mode): Screen | null {
  if (screen === 'queue' || screen === 'settings') return FLOWS[mode][0] ?? 'amount';
  if (screen === 'shift') return 'settings';
  const flow = FLOWS[mode];
  const i = flow.indexOf(screen);
  return i <= 0 || screen === 'result' ? null : (flow[i - 1] ?? null);
}

const IDLE_STATUS: SyncStatus = {
  online: true,
  phase: 'idle',
  progress: null,
  lastSyncAt: null,
  lastError: null,
  nextAttemptAt: null,
};

export const EMPTY_SUMMARY: QueueSummary = {
  pending: 0,
  pendingTotals: {},
  confirming: 0,
  confirmingTotals: {},
  declined: 0,
  expiringSoon: 0,
  expired: 0,
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
  /** True while the result screen waits for the server's answer. */
  waiting: boolean;
  go(screen: Screen): void;
  /** The next or previous step of the current mode's flow (no-op at either end). */
  next(): void;
  back(): void;
  patchDraft(patch: Partial<Draft>): void;
  patchDonor(patch: Partial<DonorDraft>): void;
  patchSchedule(patch: Partial<ScheduleDraft>): void;
  /** Typed on the keypad or keyboard: digits, '00', '.', 'back', 'clear'. */
  typeAmount(key: string): void;
  setAmountMinor(minor: number): void;
  startOver(): void;
  /**
   * After a decline: back to the payment step with the amount, donor, campaign and schedule kept
   * and every card, bank and charity-card field emptied (nothing of the declined card stays).
   */
  tryAnotherPayment(): void;
  setSettings(settings: DeviceSettings | null): void;
  setLocal(local: LocalSettings): void;
  setStatus(status: SyncStatus): void;
  setSummary(summary: QueueSummary): void;
  setResult(item: OutboxItem | null, waiting?: boolean): void;
}

/** At most 7 whole digits and 2 decimals: the keypad cannot type more than the limit needs. */
const AMOUNT_TEXT = /^\d{0,7}(\.\d{0,2})?$/;

const modeOf = (local: LocalSettings | null): Mode => local?.mode ?? 'cashier';

export const useTerminal = create<TerminalState>((set, get) => ({
  screen: 'pairing',
  draft: emptyDraft(),
  settings: null,
  local: null,
  status: IDLE_STATUS,
  summary: EMPTY_SUMMARY,
  result: null,
  waiting: false,
  go: (screen) => set({ screen }),
  next() {
    const to = nextScreen(get().screen, modeOf(get().local));
    if (to) set({ screen: to });
  },
  back() {
    const to = previousScreen(get().screen, modeOf(get().local));
    if (to) set({ screen: to });
  },
  patchDraft: (patch) => set({ draft: { ...get().draft, ...patch } }),
  patchDonor: (patch) => set({ draft: { ...get().draft, donor: { ...get().draft.donor, ...patch } } }),
  patchSchedule: (patch) =>
    set({ draft: { ...get().draft, schedule: { ...get().draft.schedule, ...patch } } }),
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
    const { settings, local } = get();
    const draft = emptyDraft(settings?.currencies[0] ?? 'USD', '');
    set({
      draft,
      result: null,
      waiting: false,
      screen: settings ? (FLOWS[modeOf(local)][0] ?? 'amount') : 'pairing',
    });
    // A kiosk never offers a schedule: keep its draft one-time even if a stale state said otherwise.
    if (modeOf(local) === 'kiosk') set({ draft: { ...draft, recurring: false } });
  },
  tryAnotherPayment() {
    const { draft } = get();
    const empty = emptyDraft(draft.currency);
    set({
      draft: { ...draft, card: empty.card, swiped: null, bank: empty.bank, charity: empty.charity },
      result: null,
      waiting: false,
      screen: 'method',
    });
  },
  setSettings(settings) {
    const { draft } = get();
    // A currency the organisation no longer accepts falls back to its first one.
    if (settings && !settings.currencies.includes(draft.currency)) {
      set({ settings, draft: { ...draft, currency: settings.currencies[0] ?? draft.currency } });
    } else set({ settings });
  },
  setLocal: (local) => set({ local }),
  setStatus: (status) => set({ status }),
  setSummary: (summary) => set({ summary }),
  setResult: (result, waiting = false) => set({ result, waiting }),
}));
