/**
 * Keeping the terminal up on a counter nobody watches. A renderer that dies (out of memory, a
 * GPU driver fault, a killed process) is reopened, within a budget; past the budget the window
 * says so in plain words instead of showing a blank page. Donations are already durable in the
 * renderer's outbox before the UI says "saved", so a reload loses nothing that was confirmed.
 */
import type { RestartBudget } from './restart-budget.ts';

export interface RenderGone {
  reason: string;
  exitCode: number;
}

/** The part of `WebContents` recovery listens to. */
export interface WatchedContents {
  on(event: 'render-process-gone', listener: (event: unknown, details: RenderGone) => void): void;
  isDestroyed(): boolean;
}

export interface RecoveryDeps {
  budget: RestartBudget;
  /** Load the app's page again (a new renderer process). */
  reopen(): void;
  /** Show that the terminal stopped (the budget is spent). */
  giveUp(): void;
  log(message: string, fields?: Record<string, unknown>): void;
}

export function watchRendererCrashes(contents: WatchedContents, deps: RecoveryDeps): void {
  contents.on('render-process-gone', (_event, details) => {
    if (contents.isDestroyed()) return;
    const fields = { reason: details.reason, exitCode: details.exitCode };
    if (deps.budget.take()) {
      deps.log('renderer gone: reopening', fields);
      deps.reopen();
    } else {
      deps.log('renderer gone again: restart budget spent, not reopening', fields);
      deps.giveUp();
    }
  });
}

/** The page shown when the renderer keeps dying: static text, no script, as a data: URL. */
export function stoppedPageUrl(): string {
  const html = [
    '<!doctype html><html><head><meta charset="utf-8"><title>Kupah Terminal</title>',
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<style>body{font:18px/1.5 system-ui,sans-serif;margin:15vh auto;max-width:36em;padding:0 1em}</style>',
    '</head><body><h1>The terminal stopped</h1>',
    '<p>The terminal stopped unexpectedly several times in a row. Close it and start it again.</p>',
    '<p>Donations this device saved are kept and will be sent when it runs again.</p>',
    '</body></html>',
  ].join('');
  return `data:text/html;charset=utf-8,${encodeURIComponent(html)}`;
}
