/**
 * The campaigns and reasons a printed receipt names, from the reference data kept on the device
 * (offline too). Loaded once per screen; until they arrive a receipt shows their numbers.
 */
import type { RefCampaign, RefReason } from '@kupah/contracts';
import type { TerminalData } from '@kupah/terminal-core';
import { useEffect, useState } from 'react';
import { useServices } from '../app-context.ts';

export interface ReceiptNames {
  campaigns: ReadonlyMap<number, RefCampaign>;
  reasons: ReadonlyMap<number, RefReason>;
}

export const NO_NAMES: ReceiptNames = { campaigns: new Map(), reasons: new Map() };

export async function loadReceiptNames(data: TerminalData): Promise<ReceiptNames> {
  const [campaigns, reasons] = await Promise.all([data.campaigns(), data.reasons()]);
  return {
    campaigns: new Map(campaigns.map((c) => [c.campaignNum, c])),
    reasons: new Map(reasons.map((r) => [r.reasonNum, r])),
  };
}

export function useReceiptNames(): ReceiptNames {
  const { data } = useServices();
  const [names, setNames] = useState<ReceiptNames>(NO_NAMES);
  useEffect(() => {
    let live = true;
    void loadReceiptNames(data)
      .then((loaded) => live && setNames(loaded))
      .catch(() => undefined);
    return () => {
      live = false;
    };
  }, [data]);
  return names;
}
