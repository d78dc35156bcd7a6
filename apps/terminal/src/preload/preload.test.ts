import {
  BRIDGE_CHANNELS,
  BRIDGE_OS_SECRETS_ARG,
  type ReceiptPrint,
  type TerminalBridge,
} from '@kupah/contracts';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ZodError } from 'zod';
import type { SenderEvent } from '../main/app-origin.ts';
import { registerBridgeHandlers } from '../main/bridge-handlers.ts';

const electron = vi.hoisted(() => ({
  contextBridge: { exposeInMainWorld: vi.fn() },
  ipcRenderer: { invoke: vi.fn(async (..._: unknown[]): Promise<unknown> => undefined) },
}));
vi.mock('electron', () => electron);

const receipt: ReceiptPrint = { title: 'Receipt', lines: ['18.00 USD'], direction: 'rtl' };
const argv = process.argv;

/** Runs the preload as Electron would (fresh, with the given command line) and returns what it exposed. */
async function loadPreload(args: string[] = []): Promise<{ name: string; api: TerminalBridge }> {
  process.argv = [...argv, ...args];
  vi.resetModules();
  electron.contextBridge.exposeInMainWorld.mockClear();
  await import('./preload.ts');
  expect(electron.contextBridge.exposeInMainWorld).toHaveBeenCalledTimes(1);
  const [name, api] = electron.contextBridge.exposeInMainWorld.mock.calls[0]!;
  return { name, api };
}

describe('preload', () => {
  beforeEach(() => {
    electron.ipcRenderer.invoke.mockReset();
  });
  afterEach(() => {
    process.argv = argv;
  });

  it('exposes one object, window.kupah, with exactly the bridge and no IPC access', async () => {
    const { name, api } = await loadPreload();
    expect(name).toBe('kupah');
    expect(Object.keys(api).sort()).toEqual(
      [
        'appVersion',
        'hostName',
        'location',
        'platform',
        'printReceipt',
        'secrets',
        'setKiosk',
        'timeZone',
      ].sort(),
    );
    expect(api.platform).toBe('electron');
    expect(Object.values(api)).not.toContain(electron.ipcRenderer);
    expect(JSON.stringify(Object.keys(api))).not.toMatch(/invoke|send|ipc/i);
  });

  it('each call goes to its own channel with its arguments', async () => {
    const { api } = await loadPreload([BRIDGE_OS_SECRETS_ARG]);
    const { invoke } = electron.ipcRenderer;
    await api.appVersion();
    await api.hostName();
    await api.location();
    await api.printReceipt(receipt);
    await api.setKiosk(true);
    await api.secrets!.protect('plain');
    await api.secrets!.reveal('c2VhbGVk');
    expect(invoke.mock.calls).toEqual([
      [BRIDGE_CHANNELS.appVersion],
      [BRIDGE_CHANNELS.hostName],
      [BRIDGE_CHANNELS.location],
      [BRIDGE_CHANNELS.printReceipt, receipt],
      [BRIDGE_CHANNELS.setKiosk, true],
      [BRIDGE_CHANNELS.protectSecret, 'plain'],
      [BRIDGE_CHANNELS.revealSecret, 'c2VhbGVk'],
    ]);
  });

  it('answers the time zone itself, from Intl', async () => {
    const { api } = await loadPreload();
    expect(api.timeZone()).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(electron.ipcRenderer.invoke).not.toHaveBeenCalled();
  });

  it('exposes secrets only when the main process said the OS can protect them', async () => {
    expect((await loadPreload()).api.secrets).toBeNull();
    expect(Object.keys((await loadPreload([BRIDGE_OS_SECRETS_ARG])).api.secrets ?? {}).sort()).toEqual([
      'protect',
      'reveal',
    ]);
  });

  it('talks to the handlers the main process registers (same channel table, same schemas)', async () => {
    const handlers = new Map<string, (event: SenderEvent, ...args: unknown[]) => Promise<unknown>>();
    const page: SenderEvent = { senderFrame: { url: 'file:///app/dist/renderer/index.html', parent: null } };
    registerBridgeHandlers(
      { handle: (channel, listener) => void handlers.set(channel, listener) },
      {
        appVersion: () => '0.1.0',
        hostName: () => 'front-desk',
        printReceipt: async () => ({ printed: true }),
        secrets: { protect: async (p) => `p:${p}`, reveal: async (t) => `r:${t}` },
        setKiosk: () => {},
        isTrustedSender: (event) => event === page,
      },
    );
    electron.ipcRenderer.invoke.mockImplementation((channel, ...args) => {
      const handler = handlers.get(channel as string);
      if (!handler) throw new Error(`no handler for ${String(channel)}`);
      return handler(page, ...args);
    });
    const { api } = await loadPreload([BRIDGE_OS_SECRETS_ARG]);
    expect(await api.appVersion()).toBe('0.1.0');
    expect(await api.hostName()).toBe('front-desk');
    expect(await api.location()).toBeNull();
    expect(await api.printReceipt(receipt)).toEqual({ printed: true });
    expect(await api.setKiosk(false)).toBeUndefined();
    expect(await api.secrets!.protect('x')).toBe('p:x');
    expect(await api.secrets!.reveal('AAAA')).toBe('r:AAAA');
    // A script in the page passing junk through the bridge still meets the schema.
    await expect(api.printReceipt({ title: 1 } as unknown as ReceiptPrint)).rejects.toBeInstanceOf(ZodError);
  });
});
