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
import type { deliveries, deliveryAttempts } from '../../../server/src/admin/admin-service.ts';
import type {
  consoleSettings,
  deviceList,
  pairNewDevice,
  scheduleDetail,
  integrations as serverIntegrations,
} from '../../../server/src/console/console-service.ts';
import type { OrgAuditEntry } from '../../../server/src/console/users-repo.ts';
import type {
  LinkInfo as ServerLinkInfo,
  UserListItem,
  UserView,
} from '../../../server/src/console/users-service.ts';

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

/** Today's answer: the server's own type (console/dashboard.ts), imported as a type only. */
export type { Dashboard } from '../../../server/src/console/dashboard.ts';

// --- Payments -----------------------------------------------------------------------------------

export type { PaymentList, PaymentSummary };

/** The read API's payment detail, with its refunds (pending, succeeded or failed). */
export type PaymentDetail = ContractPaymentDetail;
export type Refund = PaymentDetail['refunds'][number];

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
  queueDepth: number | null;
  queueTotalMinor: number | null;
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
  gateway: { provider: string | null; url: string | null; keyLast4: string | null };
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
  attempt: number;
  startedAt: string;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
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

// --- Compile-time checks against the server's own answers ---------------------------------------
// Each declaration above must accept what the server's service returns: a server change that
// breaks a screen's expectations fails the console's type check.
type Answer<F extends (...a: never[]) => unknown> = Awaited<ReturnType<F>>;
type Accepts<Mine, Theirs extends Mine> = Theirs;
export type ServerChecks = [
  Accepts<SessionUser, UserView>,
  Accepts<ConsoleUserRow, UserListItem>,
  Accepts<LinkInfo, ServerLinkInfo>,
  Accepts<ScheduleDetail, Answer<typeof scheduleDetail>>,
  Accepts<{ devices: Device[] }, Answer<typeof deviceList>>,
  Accepts<PairingAnswer, Answer<typeof pairNewDevice>>,
  Accepts<Integrations, Answer<typeof serverIntegrations>>,
  Accepts<SettingsAnswer, Answer<typeof consoleSettings>>,
  Accepts<{ deliveries: Delivery[] }, Answer<typeof deliveries>>,
  Accepts<{ attempts: Attempt[] }, Answer<typeof deliveryAttempts>>,
  Accepts<AuditEntry, OrgAuditEntry>,
];
