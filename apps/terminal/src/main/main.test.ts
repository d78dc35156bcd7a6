import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { BRIDGE_CHANNELS, BRIDGE_OS_SECRETS_ARG } from '@kupah/contracts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ZodError } from 'zod';

/** A stand-in for the parts of `electron` main.ts touches, recording what it was asked. */
const fake = await vi.hoisted(async () => {
  const { EventEmitter } = await import('node:events');
  type Handler = (event: unknown, ...args: unknown[]) => Promise<unknown>;
  type HeaderHook = (details: object, callback: (r: object) => void) => void;
  type PermissionHook = (wc: unknown, permission: string, callback: (ok: boolean) => void) => void;
  const state = {
    locked: true,
    logs: '',
    windows: [] as Array<InstanceType<typeof FakeWindow>>,
    handlers: new Map<string, Handler>(),
    headerHook: null as HeaderHook | null,
    permissionHook: null as PermissionHook | null,
    menu: 'untouched' as unknown,
    packaged: false,
  };
  class FakeApp extends EventEmitter {
    get isPackaged() {
      return state.packaged;
    }
    requestSingleInstanceLock = () => state.locked;
    whenReady = () => Promise.resolve();
    getVersion = () => '9.8.7';
    getPath = () => state.logs;
    setAppUserModelId = () => {};
    quit = vi.fn();
    exit = vi.fn();
  }
  const app = new FakeApp();
  class FakeWindow extends EventEmitter {
    loaded: string[] = [];
    kiosk: boolean | undefined;
    openHandler: ((d: { url: string }) => unknown) | undefined;
    webContents = Object.assign(new EventEmitter(), {
      isDestroyed: () => false,
      closeDevTools: vi.fn(),
      setWindowOpenHandler: (h: (d: { url: string }) => unknown) => {
        this.openHandler = h;
      },
    });
    constructor(readonly options: { webPreferences?: Record<string, unknown>; kiosk?: boolean }) {
      super();
      state.windows.push(this);
      app.emit('web-contents-created', {}, this.webContents);
    }
    loadFile = async (file: string) => void this.loaded.push(pathToFileURL(file).href);
    loadURL = async (url: string) => void this.loaded.push(url);
    setKiosk = (on: boolean) => {
      this.kiosk = on;
    };
    isDestroyed = () => false;
  }
  return {
    state,
    module: {
      app,
      BrowserWindow: FakeWindow,
      ipcMain: { handle: (channel: string, handler: Handler) => state.handlers.set(channel, handler) },
      Menu: { setApplicationMenu: (m: unknown) => (state.menu = m) },
      safeStorage: {
        isAsyncEncryptionAvailable: async () => true,
        getSelectedStorageBackend: () => 'gnome_libsecret',
        encryptStringAsync: async (s: string) => Buffer.from(s),
        decryptStringAsync: async (b: Buffer) => ({ result: b.toString(), shouldReEncrypt: false }),
      },
      session: {
        defaultSession: {
          webRequest: { onHeadersReceived: (hook: HeaderHook) => (state.headerHook = hook) },
          setPermissionRequestHandler: (hook: PermissionHook) => (state.permissionHook = hook),
          setPermissionCheckHandler: () => {},
        },
      },
    },
  };
});
vi.mock('electron', () => fake.module);

const argv = process.argv;

/** Runs main.ts as Electron would, with this command line, and waits for the window. */
async function startMain(args: string[] = []) {
  fake.state.logs = mkdtempSync(join(tmpdir(), 'kupah-main-'));
  fake.state.windows = [];
  fake.state.handlers.clear();
  fake.state.menu = 'untouched';
  fake.module.app.removeAllListeners();
  process.argv = [...argv, ...args];
  const processHooks = new Map<string, (error: unknown) => void>();
  vi.spyOn(process, 'on').mockImplementation((event, listener) => {
    processHooks.set(String(event), listener as (error: unknown) => void);
    return process;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  vi.resetModules();
  await import('./main.ts');
  await vi.waitFor(() =>
    expect(
      fake.state.windows.length +
        fake.module.app.quit.mock.calls.length +
        fake.module.app.exit.mock.calls.length,
    ).toBe(1),
  );
  return { processHooks };
}

describe('main process wiring', () => {
  afterEach(() => {
    process.argv = argv;
    fake.state.locked = true;
    fake.state.packaged = false;
    delete process.env.KUPAH_RENDERER_URL;
    fake.module.app.quit.mockClear();
    fake.module.app.exit.mockClear();
    vi.restoreAllMocks();
  });

  it('opens one secure window on the built renderer, with a bridge handler for every channel', async () => {
    await startMain();
    const [win] = fake.state.windows;
    expect(win!.options.webPreferences).toMatchObject({
      contextIsolation: true,
      sandbox: true,
      nodeIntegration: false,
    });
    expect(String(win!.options.webPreferences?.preload)).toMatch(/preload[/\\]preload\.cjs$/);
    expect(win!.options.webPreferences?.additionalArguments).toEqual([BRIDGE_OS_SECRETS_ARG]);
    expect(win!.loaded).toHaveLength(1);
    expect(win!.loaded[0]).toMatch(/renderer-electron\/index\.html$/);
    expect([...fake.state.handlers.keys()].sort()).toEqual(Object.values(BRIDGE_CHANNELS).sort());
    expect(fake.state.menu).toBeNull();
    let headers: unknown;
    fake.state.headerHook!({ resourceType: 'mainFrame' }, (r) => (headers = r));
    expect(JSON.stringify(headers)).toContain("script-src 'self';");
    const answers: boolean[] = [];
    fake.state.permissionHook!(null, 'media', (ok) => answers.push(ok));
    expect(answers).toEqual([false]);
  });

  it('answers the page it loaded and nobody else, with parsed payloads only', async () => {
    await startMain();
    const [win] = fake.state.windows;
    const page = { senderFrame: { url: win!.loaded[0], parent: null } };
    const stranger = { senderFrame: { url: 'https://evil.example/', parent: null } };
    const send = (channel: string, event: unknown, ...args: unknown[]) =>
      fake.state.handlers.get(channel)!(event, ...args);
    expect(await send(BRIDGE_CHANNELS.appVersion, page)).toBe('9.8.7');
    await send(BRIDGE_CHANNELS.setKiosk, page, true);
    expect(win!.kiosk).toBe(true);
    await expect(send(BRIDGE_CHANNELS.setKiosk, page, 'no')).rejects.toBeInstanceOf(ZodError);
    await expect(send(BRIDGE_CHANNELS.setKiosk, stranger, false)).rejects.toThrow(/own page/);
    expect(win!.kiosk).toBe(true);
    expect(
      await send(BRIDGE_CHANNELS.revealSecret, page, await send(BRIDGE_CHANNELS.protectSecret, page, 'k')),
    ).toBe('k');
  });

  it('starts in kiosk mode with --kiosk', async () => {
    await startMain(['--kiosk']);
    expect(fake.state.windows[0]!.options.kiosk).toBe(true);
  });

  it('keeps the window on the app, and reopens it after a renderer crash', async () => {
    await startMain();
    const [win] = fake.state.windows;
    expect(win!.openHandler!({ url: 'https://example.org' })).toEqual({ action: 'deny' });
    const away = { preventDefault: vi.fn() };
    win!.webContents.emit('will-navigate', away, 'https://example.org/');
    expect(away.preventDefault).toHaveBeenCalled();
    win!.webContents.emit('render-process-gone', {}, { reason: 'oom', exitCode: 1 });
    expect(win!.loaded).toHaveLength(2);
    expect(readFileSync(join(fake.state.logs, 'main.log'), 'utf8')).toContain('renderer gone: reopening');
  });

  it('logs uncaught errors and keeps going', async () => {
    const { processHooks } = await startMain();
    expect(() => processHooks.get('uncaughtException')!(new Error('boom'))).not.toThrow();
    expect(() => processHooks.get('unhandledRejection')!('nope')).not.toThrow();
    const log = readFileSync(join(fake.state.logs, 'main.log'), 'utf8');
    expect(log).toContain('uncaught exception (kept running)');
    expect(log).toContain('"error":"nope"');
  });

  it('a second instance quits without opening a window', async () => {
    fake.state.locked = false;
    await startMain();
    expect(fake.module.app.quit).toHaveBeenCalled();
    expect(fake.state.windows).toHaveLength(0);
  });

  it('from the work tree, --devtools gives developer tools and keeps the menu', async () => {
    await startMain(['--devtools']);
    expect(fake.state.windows[0]!.options.webPreferences?.devTools).toBe(true);
    expect(fake.state.menu).toBe('untouched');
  });

  it('packaged: --devtools and KUPAH_RENDERER_URL are ignored (and logged), no developer tools anywhere', async () => {
    fake.state.packaged = true;
    process.env.KUPAH_RENDERER_URL = 'http://attacker.example:5173/';
    await startMain(['--devtools']);
    const [win] = fake.state.windows;
    expect(win!.options.webPreferences?.devTools).toBe(false);
    expect(win!.loaded[0]).toMatch(/renderer-electron\/index\.html$/);
    // No menu, so no Ctrl+Shift+I / F12 accelerators.
    expect(fake.state.menu).toBeNull();
    let headers: unknown;
    fake.state.headerHook!({ resourceType: 'mainFrame' }, (r) => (headers = r));
    expect(JSON.stringify(headers)).toContain("script-src 'self';");
    // Should DevTools open anyway, they are closed at once.
    win!.webContents.emit('devtools-opened');
    expect(win!.webContents.closeDevTools).toHaveBeenCalled();
    // The page the attacker named gets no answer from the bridge.
    const stranger = { senderFrame: { url: 'http://attacker.example:5173/', parent: null } };
    await expect(fake.state.handlers.get(BRIDGE_CHANNELS.revealSecret)!(stranger, 'x')).rejects.toThrow(
      /own page/,
    );
    const log = readFileSync(join(fake.state.logs, 'main.log'), 'utf8');
    expect(log).toContain('"level":"warn","message":"developer switches ignored: this is a packaged build"');
    expect(log).toContain('"ignored":["KUPAH_RENDERER_URL","--devtools"]');
  });

  it('packaged: a remote debugging switch stops the terminal before any window or bridge exists', async () => {
    fake.state.packaged = true;
    await startMain(['--remote-debugging-port=9222']);
    expect(fake.module.app.exit).toHaveBeenCalledWith(1);
    expect(fake.state.windows).toHaveLength(0);
    expect(fake.state.handlers.size).toBe(0);
    expect(readFileSync(join(fake.state.logs, 'main.log'), 'utf8')).toContain(
      '"refused":["remote-debugging-port"]',
    );
  });
});
