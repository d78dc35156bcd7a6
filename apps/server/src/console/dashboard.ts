/**
 * The console's Today screen: totals and counts of the organisation's payments over today or the
 * last 7 or 30 days (the organisation's days, in its time zone), by campaign, reason, device,
 * collector, method and currency; a series by hour (today) or day; what is being confirmed with
 * the gateway and what the terminals still hold. Amounts in minor units, never added across
 * currencies.
 */
import type { Deps } from '../deps.ts';
import type { Org } from '../orgs/repo.ts';
import { civilDateIn } from '../orgs/settings.ts';
import { resolveRange } from '../reports/repo.ts';
import {
  type DashboardCell,
  dashboardCells,
  deviceQueues,
  groupLabels,
  pendingNow,
  reasonCells,
} from './dashboard-repo.ts';

export const DASHBOARD_RANGES = ['today', '7d', '30d'] as const;
export type DashboardRange = (typeof DASHBOARD_RANGES)[number];
const DAYS: Record<DashboardRange, number> = { today: 1, '7d': 7, '30d': 30 };

interface Figure {
  count: number;
  amountMinor: number;
}
export interface DashboardRow {
  key: string | null;
  label: string | null;
  currency: string;
  /** Charged and not voided (refunded ones included, gross: what was refunded is in `refunded`). */
  succeeded: Figure;
  /** Payments refunded in part or in full: how many, and the money refunded. */
  refunded: Figure;
  voided: Figure;
  declined: Figure;
  failed: Figure;
  pending: Figure;
}

const PART: Record<string, keyof Omit<DashboardRow, 'key' | 'label' | 'currency'>> = {
  Success: 'succeeded',
  PartiallyRefunded: 'succeeded',
  Refunded: 'succeeded',
  Voided: 'voided',
  Declined: 'declined',
  Error: 'failed',
  Pending: 'pending',
};

const zero = (): Figure => ({ count: 0, amountMinor: 0 });

function rows(
  cells: DashboardCell[],
  name: (gid: string | null) => { key: string | null; label: string | null },
): DashboardRow[] {
  const out = new Map<string, DashboardRow>();
  for (const c of cells) {
    const part = PART[c.status];
    if (!part) continue;
    const id = `${c.gid ?? ''}\u0000${c.currency}`;
    let row = out.get(id);
    if (!row) {
      row = {
        ...name(c.gid),
        currency: c.currency,
        succeeded: zero(),
        refunded: zero(),
        voided: zero(),
        declined: zero(),
        failed: zero(),
        pending: zero(),
      };
      out.set(id, row);
    }
    row[part].count += c.count;
    row[part].amountMinor += c.minor;
    if (c.status === 'PartiallyRefunded' || c.status === 'Refunded') {
      row.refunded.count += c.count;
      row.refunded.amountMinor += c.refundedMinor;
    }
  }
  // Largest first (by what succeeded), the group-less row last.
  return [...out.values()].sort(
    (a, b) =>
      (a.key === null ? 1 : 0) - (b.key === null ? 1 : 0) ||
      b.succeeded.amountMinor - a.succeeded.amountMinor ||
      String(a.key).localeCompare(String(b.key)) ||
      a.currency.localeCompare(b.currency),
  );
}

/** `YYYY-MM-DD` plus `days` (negative: back). */
function addDays(day: string, days: number): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + days)).toISOString().slice(0, 10);
}

/** The buckets of the series, in order: every hour of today up to now, or every day of the range. */
function buckets(range: DashboardRange, firstDay: string, today: string, now: Date, tz: string): string[] {
  if (range === 'today') {
    const hour = Number(
      new Intl.DateTimeFormat('en-GB', { timeZone: tz, hour: '2-digit', hourCycle: 'h23' }).format(now),
    );
    return Array.from({ length: hour + 1 }, (_, h) => `${today}T${String(h).padStart(2, '0')}:00`);
  }
  const out: string[] = [];
  for (let day = firstDay; day <= today; day = addDays(day, 1)) out.push(day);
  return out;
}

export async function dashboard(deps: Deps, org: Org, range: DashboardRange) {
  const tz = org.settings.timezone;
  const now = deps.now();
  const today = civilDateIn(now, tz);
  const firstDay = addDays(today, 1 - DAYS[range]);
  const bounds = await resolveRange(deps.db, tz, firstDay, today);
  const from = bounds.from!;
  const to = bounds.to!;
  const hourly = range === 'today';
  const [cells, reasons, pending, queues] = await Promise.all([
    dashboardCells(deps.db, org.id, from, to, tz, hourly),
    reasonCells(deps.db, org.id, from, to),
    pendingNow(deps.db, org.id),
    deviceQueues(deps.db, org.id),
  ]);
  const of = (d: DashboardCell['dimension']) => cells.filter((c) => c.dimension === d);
  const ids = (list: DashboardCell[]) => [...new Set(list.flatMap((c) => (c.gid === null ? [] : [c.gid])))];
  const labels = await groupLabels(deps.db, org.id, {
    campaign: ids(of('campaign')),
    device: ids(of('device')),
    collector: ids(of('collector')),
    reason: ids(reasons),
  });
  const named =
    (names: Map<string, { key: string; label: string | null }>) =>
    (gid: string | null): { key: string | null; label: string | null } =>
      gid === null ? { key: null, label: null } : (names.get(gid) ?? { key: gid, label: null });
  const plain = (gid: string | null) => ({ key: gid, label: null });

  const totals = rows(of('currency'), () => ({ key: null, label: null }));
  const currencies = totals.map((t) => t.currency).sort();
  const seriesRows = rows(of('series'), plain);
  const points = buckets(range, firstDay, today, now, tz).flatMap((at) =>
    currencies.map((currency) => {
      const r = seriesRows.find((s) => s.key === at && s.currency === currency);
      return {
        at,
        currency,
        succeeded: r?.succeeded ?? zero(),
        refunded: r?.refunded ?? zero(),
        declined: r?.declined ?? zero(),
        voided: r?.voided ?? zero(),
      };
    }),
  );
  const queued = queues.filter((d) => d.queueDepth > 0);
  return {
    range,
    from: from.toISOString(),
    to: to.toISOString(),
    timezone: tz,
    totals: totals.map(({ key: _k, label: _l, ...t }) => t),
    byCampaign: rows(of('campaign'), named(labels.campaign)),
    byReason: rows(reasons, named(labels.reason)),
    byDevice: rows(of('device'), named(labels.device)),
    byCollector: rows(of('collector'), named(labels.collector)),
    byMethod: rows(of('method'), plain),
    byCurrency: rows(of('currency'), plain).map((r) => ({ ...r, key: r.currency })),
    series: { unit: hourly ? ('hour' as const) : ('day' as const), points },
    pending: {
      count: pending.reduce((n, p) => n + p.count, 0),
      byCurrency: pending,
    },
    declined: totals.map((t) => ({ currency: t.currency, ...t.declined })),
    deviceQueue: {
      devices: queued.length,
      operations: queued.reduce((n, d) => n + d.queueDepth, 0),
      amountMinor: queued.reduce((n, d) => n + d.queueTotalMinor, 0),
      byDevice: queued,
    },
  };
}
export type Dashboard = Awaited<ReturnType<typeof dashboard>>;
