/**
 * The console API's answers as the console reads them (docs/console-api.md). Payments, donors and
 * schedules are the read API's own shapes (@kupah/contracts, imported as types only: nothing of
 * zod reaches the bundle); the rest is declared from the server's console services.
 */
import type {
  DonorDetail as ContractDonorDetail,
  PaymentDetail as ContractPaymentDetail,
  DonorRecord,
  PaymentList,
  PaymentSummary,
  ScheduleSummary,
} from '@kupah/contracts';

export type Role = 'viewer' | 'manager' | 'owner';
export const ROLES: readonly Role[] = ['viewer', 'manager', 'owner'];

export interface SessionUser {
  userId: number;
  email: string;
  name: string | null;
  role: Role;
  orgGuid: string;
  orgName: string;
}

export interface SessionAnswer {
  user: SessionUser;
  csrfToken: string;
}

export interface LinkInfo {
  kind: 'invitation' | 'reset';
  email: string;
  orgName: string;
}

// --- Today --------------------------------------------------------------------------------------

export interface Figure {
  count: number;
  amountMinor: number;
}

export interface DashboardRow {
  key: string | null;
  label: string | null;
  currency: string;
  succeeded: Figure;
  voided: Figure;
  declined: Figure;
  failed: Figure;
  pending: Figure;
}

export interface Dashboard {
  range: 'today' | '7d' | '30d';
  from: string;
  to: string;
  timezone: string;
  totals: Array<Omit<DashboardRow, 'key' | 'label'>>;
  byCampaign: DashboardRow[];
  byReason: DashboardRow[];
  byDevice: DashboardRow[];
  byCollector: DashboardRow[];
  byMethod: DashboardRow[];
  byCurrency: DashboardRow[];
  /** `at`: the organisation's civil hour (`2026-11-26T09:00`) or day (`2026-11-26`). */
  series: {
    unit: 'hour' | 'day';
    points: Array<{ at: string; currency: string; succeeded: Figure; declined: Figure; voided: Figure }>;
  };
  pending: { count: number; byCurrency: Array<{ currency: string; count: number; amountMinor?: number }> };
  declined: Array<{ currency: string; count: number; amountMinor: number }>;
  deviceQueue: {
    devices: number;
    operations: number;
    amountMinor: number;
    byDevice: Array<{ deviceId: string; name?: string | null; queueDepth: number; queueTotalMinor?: number }>;
  };
}

// --- Payments -----------------------------------------------------------------------------------

export type { PaymentList, PaymentSummary };

export interface Refund {
  refundId?: string | number;
  amountMinor: number;
  currency?: string;
  reason?: string | null;
  status?: string;
  createdAt: string;
}

/** The read API's payment detail, and its refunds once the refund work adds them. */
export type PaymentDetail = ContractPaymentDetail & { refunds?: Refund[]; refundableMinor?: number };

// --- Schedules ----------------------------------------------------------------------------------

export type { ScheduleSummary };

export interface Instalment {
  sequence: number;
  dueDate: string;
  nominalDate: string;
  hebrewDate: string;
  hebrewDateHebrew?: string;
  amountMinor: number;
  status: string;
  attempts: number;
  lastError: string | null;
  receiptNum: string | null;
}

export interface ScheduleFailure {
  receiptNum: string;
  status: string;
  amountMinor: number;
  currency: string;
  instalment: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
}

export interface ScheduleDetail {
  schedule: ScheduleSummary;
  upcoming: Instalment[];
  instalments: Instalment[];
  failures: ScheduleFailure[];
}

// --- People and catalog -------------------------------------------------------------------------

export type Donor = DonorRecord & { mergedInto?: string | null };
export type DonorDetail = ContractDonorDetail & { mergedInto?: string | null; merges?: unknown[] };

export interface CollectorRow {
  collectorId: string;
  firstName: string | null;
  lastName: string | null;
  firstNameHebrew: string | null;
  lastNameHebrew: string | null;
}

export interface Campaign {
  campaignNumber: number;
  campaignName: string | null;
  campaignFriendlyName: string | null;
}

export interface Reason {
  reasonNumber: number;
  reasonName: string | null;
  reasonNameHebrew: string | null;
  campaignNum: number | null;
}

// --- Devices ------------------------------------------------------------------------------------

export interface Device {
  deviceId: string;
  name: string;
  status: 'waiting for pairing' | 'pairing code expired' | 'paired' | 'revoked';
  sandbox: boolean;
  pairedAt: string | null;
  lastSeenAt: string | null;
  appVersion: string | null;
  queueDepth: number;
  queueTotalMinor: number;
  lastShiftClosedAt: string | null;
  revokedAt: string | null;
  location: string | null;
}

export interface PairingAnswer {
  deviceId: string;
  name?: string;
  pairingCode: string;
  pairingUrl: string;
  expiresAt: string;
}

export interface Shift {
  closeId: string;
  deviceId: string;
  deviceName: string;
  openedAt: string;
  closedAt: string;
  closedBy: string | null;
  server?: { succeeded?: Array<{ method: string; currency: string; count: number; amountMinor: number }> };
}

// --- Integrations -------------------------------------------------------------------------------

export interface Credential {
  id: number;
  masked: string;
  name: string | null;
  sandbox: boolean;
  createdAt: string;
  revokedAt: string | null;
}

export interface Integrations {
  apiKeys: Credential[];
  sources: Credential[];
  webhooks: Array<{ kind: string; url: string; disabled: boolean }>;
  gateway: { provider: string | null; url: string | null; keyLast4: string | null; [k: string]: unknown };
}

export interface Delivery {
  id: number;
  webhookId: string;
  type: string;
  endpoint: string;
  status: string;
  attempts: number;
  nextAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError?: string | null;
  createdAt?: string;
  deliveredAt?: string | null;
}

export interface Attempt {
  attempt?: number;
  at?: string;
  attemptedAt?: string;
  statusCode?: number | null;
  status?: number | null;
  error?: string | null;
  ms?: number | null;
  durationMs?: number | null;
}

// --- Settings, users, audit ---------------------------------------------------------------------

export interface OrgSettings {
  scheduleMode: string;
  il: boolean;
  timezone: string;
  shabbatShift: boolean;
  offline: { perPaymentMinor: number; totalMinor: number; expiryHours: number };
  terminal: {
    presetsMinor: number[];
    coverFeePercent: number;
    brand: { color?: string; logo?: string; name?: string };
    [k: string]: unknown;
  };
  receipts: {
    enabled?: boolean;
    legalName?: string;
    address?: string;
    taxId?: string;
    statementEn?: string;
    statementHe?: string;
  };
  [k: string]: unknown;
}

export interface SettingsAnswer {
  name: string;
  currencies: string[];
  settings: OrgSettings;
}

export interface ConsoleUserRow extends SessionUser {
  disabled: boolean;
  invited: boolean;
  lastSignInAt: string | null;
  createdAt: string;
}

export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  method: string;
  route: string;
  path: string;
  target: Record<string, string>;
  summary: unknown;
  remoteAddr: string | null;
  status: number;
  outcome: string;
}
