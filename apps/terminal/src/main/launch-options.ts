/**
 * How this run of the terminal was asked to start: the command line (`--kiosk`, `--devtools`)
 * and the environment (`KUPAH_RENDERER_URL`, the Vite dev server during development).
 *
 * The developer switches are honoured only when Electron runs from the work tree. A packaged
 * terminal (`app.isPackaged`) ignores them: anyone at the counter can add `--devtools` to a
 * shortcut or set an environment variable, and DevTools next to the bridge would hand them
 * `window.kupah.secrets.reveal()` and with it the device credential. Chromium's own debugging
 * switches (`--remote-debugging-port`, `--ignore-certificate-errors`…) cannot be ignored, as
 * Chromium acts on them before this code runs, so a packaged terminal given one refuses to start.
 */
import { z } from 'zod';

export interface LaunchOptions {
  /** Full screen with no way out but the bridge's `setKiosk(false)`: a counter-top terminal. */
  kiosk: boolean;
  /** The dev server to load instead of the built renderer; null loads `dist/renderer-electron/index.html`. */
  rendererUrl: string | null;
  /** Developer tools: on with a dev server or `--devtools`, never in a packaged build. */
  devTools: boolean;
  /** Developer switches a packaged build ignored (to be logged as a warning). */
  ignored: string[];
  /**
   * Switches a packaged build must not run with (Chromium or Node acts on them by itself:
   * debuggers, no sandbox, any certificate); non-empty means the terminal quits before it opens
   * a window.
   */
  refused: string[];
}

const devServerUrl = z.url({ protocol: /^https?$/, error: 'KUPAH_RENDERER_URL must be an http(s) URL' });

/**
 * Chromium and Node switches that a packaged terminal refuses to run with, because they act on
 * their own, before any code of ours: a debugger on the process from outside (Chromium's DevTools
 * protocol; Node's inspector, also switched off by the `enableNodeCliInspectArguments` fuse), no
 * renderer sandbox, no same-origin policy, any TLS certificate accepted (the sync traffic, and
 * the credential in it, open to whoever sits in the middle), or arbitrary V8 flags.
 * Chromium reads switches with `--`, `-` and (on Windows) `/`, in any case on Windows.
 */
const UNSAFE_SWITCH =
  /^(?:--|-|\/)(remote-debugging-port|remote-debugging-pipe|remote-debugging-address|remote-allow-origins|inspect|inspect-brk|inspect-port|debug|debug-brk|no-sandbox|disable-web-security|ignore-certificate-errors|ignore-certificate-errors-spki-list|js-flags)(?:=|$)/i;

/** The unsafe switches found on a command line (their names, without the value). */
export function unsafeSwitches(argv: readonly string[]): string[] {
  return argv.flatMap((arg) => {
    const m = UNSAFE_SWITCH.exec(arg);
    return m ? [m[1]!.toLowerCase()] : [];
  });
}

export function launchOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
  isPackaged: boolean,
): LaunchOptions {
  const kiosk = argv.includes('--kiosk');
  const raw = env.KUPAH_RENDERER_URL?.trim();
  const askedDevTools = argv.includes('--devtools');
  if (isPackaged) {
    const ignored = [...(raw ? ['KUPAH_RENDERER_URL'] : []), ...(askedDevTools ? ['--devtools'] : [])];
    return { kiosk, rendererUrl: null, devTools: false, ignored, refused: unsafeSwitches(argv) };
  }
  const rendererUrl = raw ? devServerUrl.parse(raw) : null;
  return {
    kiosk,
    rendererUrl,
    devTools: rendererUrl !== null || askedDevTools,
    ignored: [],
    refused: [],
  };
}
