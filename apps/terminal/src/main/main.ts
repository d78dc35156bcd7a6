/**
 * The Electron main process. It only wires the real `electron` module into the small pieces
 * beside it, each tested with fakes. Order matters: the single-instance lock before anything
 * else; the CSP, the permission policy and the web contents guard before the first page loads;
 * the IPC handlers before the window (so the page's first bridge call has an answer).
 */
import { appendFileSync, mkdirSync, renameSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { app, BrowserWindow, ipcMain, Menu, safeStorage, session } from 'electron';
import { appTarget, isTrustedSender } from './app-origin.ts';
import { appPaths } from './app-paths.ts';
import { registerBridgeHandlers } from './bridge-handlers.ts';
import { cspHeader, installCsp } from './content-security-policy.ts';
import { stoppedPageUrl, watchRendererCrashes } from './crash-recovery.ts';
import { launchOptions } from './launch-options.ts';
import { createMainLog, errorFields, type LogFields } from './main-log.ts';
import { createOsSecrets } from './os-secrets.ts';
import { createReceiptPrinter } from './receipt-printer.ts';
import { RENDERER_RESTARTS, restartBudget } from './restart-budget.ts';
import { claimSingleInstance } from './single-instance.ts';
import { guardWebContents, installPermissionPolicy } from './web-contents-guard.ts';
import { printWindowOptions, windowOptions } from './window-options.ts';

/** The log file is rolled over at start once it passes this size (one old file is kept). */
const LOG_ROLL_BYTES = 5 * 1024 * 1024;

// A packaged terminal ignores the developer switches (see launch-options.ts).
const options = launchOptions(process.argv, process.env, app.isPackaged);
const paths = appPaths(import.meta.dirname);
const target = appTarget(paths.rendererFile, options.rendererUrl);

let logFile: string | null = null;
const log = createMainLog([
  (line) => process.stderr.write(line),
  (line) => {
    if (logFile) appendFileSync(logFile, line);
  },
]);
const note = (message: string, fields?: LogFields) => log.info(message, fields);

// A fault in a handler or a timer is logged; the donation screen stays up.
process.on('uncaughtException', (error) =>
  log.error('uncaught exception (kept running)', errorFields(error)),
);
process.on('unhandledRejection', (reason) =>
  log.error('unhandled rejection (kept running)', errorFields(reason)),
);

let mainWindow: BrowserWindow | null = null;

if (options.refused.length > 0) {
  // Chromium has already acted on these: quit before any window (and its bridge) exists.
  logFile = openLogFile();
  log.error('refused to start: unsafe switches on a packaged build', { refused: options.refused });
  app.exit(1);
} else if (claimSingleInstance(app, () => mainWindow)) {
  app.setAppUserModelId('org.kupah.terminal');
  app.on('window-all-closed', () => app.quit());
  app.on('child-process-gone', (_event, details) =>
    log.error('child process gone (kept running)', {
      type: details.type,
      reason: details.reason,
      exitCode: details.exitCode,
      name: details.name,
    }),
  );
  app.on('web-contents-created', (_event, contents) => guardWebContents(contents, target, note));
  app
    .whenReady()
    .then(start)
    .catch((error: unknown) => {
      log.error('the terminal could not start', errorFields(error));
      app.exit(1);
    });
}

async function start(): Promise<void> {
  logFile = openLogFile();
  if (options.ignored.length > 0)
    log.warn('developer switches ignored: this is a packaged build', { ignored: options.ignored });
  installCsp(session.defaultSession.webRequest, cspHeader({ dev: options.rendererUrl !== null }));
  installPermissionPolicy(session.defaultSession);
  // No menu on a counter: no reload or developer tools shortcuts for passers-by.
  if (!options.devTools) Menu.setApplicationMenu(null);

  const secrets = createOsSecrets(safeStorage, process.platform);
  const osSecrets = await secrets.available().catch((error: unknown) => {
    log.error('safeStorage unavailable', errorFields(error));
    return false;
  });
  registerBridgeHandlers(ipcMain, {
    appVersion: () => app.getVersion(),
    hostName: () => hostname(),
    printReceipt: createReceiptPrinter({
      openHiddenWindow: () => new BrowserWindow(printWindowOptions()),
      log: note,
    }),
    secrets: osSecrets ? secrets : null,
    setKiosk: (on) => mainWindow?.setKiosk(on),
    isTrustedSender: (event) => isTrustedSender(event, target),
  });
  mainWindow = openMainWindow(osSecrets);
  log.info('terminal started', {
    version: app.getVersion(),
    electron: process.versions.electron,
    kiosk: options.kiosk,
    osSecrets,
    renderer: target.kind === 'file' ? target.file : target.url,
  });
}

function openMainWindow(osSecrets: boolean): BrowserWindow {
  const win = new BrowserWindow(
    windowOptions({ preload: paths.preload, kiosk: options.kiosk, devTools: options.devTools, osSecrets }),
  );
  const load = () => {
    const loading = target.kind === 'file' ? win.loadFile(target.file) : win.loadURL(target.url);
    loading.catch((error: unknown) => log.error('the app page did not load', errorFields(error)));
  };
  watchRendererCrashes(win.webContents, {
    budget: restartBudget(RENDERER_RESTARTS.max, RENDERER_RESTARTS.windowMs),
    reopen: load,
    giveUp: () => {
      win
        .loadURL(stoppedPageUrl())
        .catch((error: unknown) => log.error('no stopped page', errorFields(error)));
    },
    log: (message, fields) => log.error(message, fields),
  });
  if (!options.devTools) {
    // Belt and braces: the window was made without DevTools; should they open anyway, shut them.
    win.webContents.on('devtools-opened', () => {
      log.error('developer tools opened on a terminal without them: closed');
      win.webContents.closeDevTools();
    });
  }
  win.webContents.on('unresponsive', () => log.error('renderer unresponsive'));
  win.webContents.on('responsive', () => note('renderer responsive again'));
  win.on('closed', () => {
    mainWindow = null;
  });
  load();
  return win;
}

function openLogFile(): string | null {
  try {
    const dir = app.getPath('logs');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'main.log');
    try {
      if (statSync(file).size > LOG_ROLL_BYTES) renameSync(file, join(dir, 'main.old.log'));
    } catch {
      // No log yet.
    }
    return file;
  } catch {
    return null;
  }
}
