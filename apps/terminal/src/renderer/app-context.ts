/** The durable layer and the bridge, given to every screen (tests pass their own). */
import type { TerminalBridge } from '@kupah/contracts';
import type { TerminalData } from '@kupah/terminal-core';
import { createContext, useContext } from 'react';

export interface AppServices {
  data: TerminalData;
  bridge: TerminalBridge;
}

export const ServicesContext = createContext<AppServices | null>(null);

export function useServices(): AppServices {
  const s = useContext(ServicesContext);
  if (!s) throw new Error('ServicesContext is missing');
  return s;
}
