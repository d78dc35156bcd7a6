/**
 * One terminal per machine: two would share (and fight over) the same IndexedDB outbox and
 * the same printer. A second launch hands over to the first, which comes to the front.
 */

/** The part of `app` the lock uses. */
export interface InstanceApp {
  requestSingleInstanceLock(): boolean;
  on(event: 'second-instance', listener: () => void): void;
  quit(): void;
}

/** The part of `BrowserWindow` that is brought to the front. */
export interface FocusableWindow {
  isDestroyed(): boolean;
  isMinimized(): boolean;
  restore(): void;
  show(): void;
  focus(): void;
}

/**
 * Takes the lock; false means another instance runs and this one is quitting (start nothing).
 * `currentWindow` is read when a second launch happens, since the window may not exist yet.
 */
export function claimSingleInstance(app: InstanceApp, currentWindow: () => FocusableWindow | null): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', () => {
    const win = currentWindow();
    if (!win || win.isDestroyed()) return;
    if (win.isMinimized()) win.restore();
    win.show();
    win.focus();
  });
  return true;
}
