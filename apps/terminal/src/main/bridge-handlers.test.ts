import {
  BRIDGE_CHANNELS,
  type BridgeCall,
  type BridgeReplies,
  type ReceiptPrint,
  type TerminalBridge,
} from '@kupah/contracts';
import { describe, expect, expectTypeOf, it, vi } from 'vitest';
import { ZodError } from 'zod';
import type { SenderEvent } from './app-origin.ts';
import { type BridgeDeps, type IpcHandle, parseRequest, registerBridgeHandlers } from './bridge-handlers.ts';

type Listener = (event: SenderEvent, ...args: unknown[]) => Promise<unknown>;

const trusted: SenderEvent = {
  senderFrame: { url: 'file:///app/dist/renderer-electron/index.html', parent: null },
};
const foreign: SenderEvent = { senderFrame: { url: 'https://evil.example/', parent: null } };
const receipt: ReceiptPrint = { title: 'Receipt', lines: ['18.00 USD', 'Thank you'], direction: 'ltr' };

function setup(over: Partial<BridgeDeps> = {}) {
  const listeners = new Map<string, Listener>();
  const ipcMain: IpcHandle = { handle: (channel, listener) => void listeners.set(channel, listener) };
  const deps = {
    appVersion: vi.fn(() => '1.2.3'),
    hostName: vi.fn(() => 'hall-kiosk'),
    printReceipt: vi.fn(async (_: ReceiptPrint) => ({ printed: true })),
    secrets: {
      protect: vi.fn(async (p: string) => `sealed(${p})`),
      reveal: vi.fn(async (_: string) => 'plain'),
    },
    setKiosk: vi.fn((_: boolean) => {}),
    isTrustedSender: vi.fn((event: SenderEvent) => event === trusted),
  } satisfies BridgeDeps;
  registerBridgeHandlers(ipcMain, { ...deps, ...over });
  const send = (call: BridgeCall, event: SenderEvent, ...args: unknown[]) =>
    listeners.get(BRIDGE_CHANNELS[call])!(event, ...args);
  return {
    deps,
    listeners,
    send: (call: BridgeCall, ...args: unknown[]) => send(call, trusted, ...args),
    sendAs: send,
  };
}

describe('bridge handlers', () => {
  it('answer every channel of the table, and nothing else', () => {
    const { listeners } = setup();
    expect([...listeners.keys()].sort()).toEqual(Object.values(BRIDGE_CHANNELS).sort());
    expectTypeOf<keyof BridgeReplies>().toEqualTypeOf<BridgeCall>();
  });

  it('answer with the machine facts', async () => {
    const { send } = setup();
    expect(await send('appVersion')).toBe('1.2.3');
    expect(await send('hostName')).toBe('hall-kiosk');
    expect(await send('location')).toBeNull();
  });

  it('print the parsed receipt (unknown fields dropped) and say whether it printed', async () => {
    const { send, deps } = setup();
    expect(await send('printReceipt', { ...receipt, script: '<script>' })).toEqual({ printed: true });
    expect(deps.printReceipt).toHaveBeenCalledWith(receipt);
  });

  it('reject bad payloads with the ZodError and never act on them', async () => {
    const { send, deps } = setup();
    const bad: Array<[BridgeCall, unknown[]]> = [
      ['printReceipt', []],
      ['printReceipt', ['just text']],
      ['printReceipt', [{ ...receipt, direction: 'up' }]],
      ['printReceipt', [{ ...receipt, lines: Array.from({ length: 81 }, () => 'x') }]],
      ['printReceipt', [{ ...receipt, title: 'x'.repeat(257) }]],
      ['printReceipt', [receipt, 'extra']],
      ['setKiosk', ['yes']],
      ['setKiosk', []],
      ['setKiosk', [true, false]],
      ['protectSecret', [42]],
      ['protectSecret', ['x'.repeat(4_097)]],
      ['revealSecret', ['not base64!']],
      ['revealSecret', ['']],
      ['appVersion', ['unexpected']],
      ['hostName', [{}]],
      ['location', [null]],
    ];
    for (const [call, args] of bad) await expect(send(call, ...args), call).rejects.toBeInstanceOf(ZodError);
    expect(deps.printReceipt).not.toHaveBeenCalled();
    expect(deps.setKiosk).not.toHaveBeenCalled();
    expect(deps.secrets.protect).not.toHaveBeenCalled();
    expect(deps.secrets.reveal).not.toHaveBeenCalled();
    expect(deps.appVersion).not.toHaveBeenCalled();
  });

  it('refuse messages that do not come from the app page, before parsing them', async () => {
    const { sendAs, deps } = setup();
    await expect(sendAs('setKiosk', foreign, false)).rejects.toThrow(
      /did not come from the terminal's own page/,
    );
    await expect(sendAs('revealSecret', foreign, 'AAAA')).rejects.toThrow(/own page/);
    await expect(sendAs('appVersion', { senderFrame: null })).rejects.toThrow(/own page/);
    expect(deps.setKiosk).not.toHaveBeenCalled();
    expect(deps.secrets.reveal).not.toHaveBeenCalled();
  });

  it('switch kiosk mode with the parsed flag', async () => {
    const { send, deps } = setup();
    expect(await send('setKiosk', true)).toBeUndefined();
    await send('setKiosk', false);
    expect(deps.setKiosk.mock.calls).toEqual([[true], [false]]);
  });

  it('protect and reveal secrets through the OS, or refuse where it cannot', async () => {
    const { send, deps } = setup();
    expect(await send('protectSecret', 'credential')).toBe('sealed(credential)');
    expect(await send('revealSecret', 'c2VhbGVk')).toBe('plain');
    expect(deps.secrets.reveal).toHaveBeenCalledWith('c2VhbGVk');
    const without = setup({ secrets: null });
    await expect(without.send('protectSecret', 'credential')).rejects.toThrow(/cannot protect secrets/);
  });

  it('parse each call into its own argument types', () => {
    expect(parseRequest('setKiosk', [true])).toEqual([true]);
    expectTypeOf(parseRequest('printReceipt', [receipt])).toEqualTypeOf<[ReceiptPrint]>();
    expectTypeOf(parseRequest('appVersion', [])).toEqualTypeOf<[]>();
    expectTypeOf<BridgeReplies['location']>().toEqualTypeOf<
      Awaited<ReturnType<TerminalBridge['location']>>
    >();
  });
});
