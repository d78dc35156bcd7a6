/**
 * How this run of the terminal was asked to start: the command line (`--kiosk`, `--devtools`)
 * and the environment (`KUPAH_RENDERER_URL`, the Vite dev server during development).
 */
import { z } from 'zod';

export interface LaunchOptions {
  /** Full screen with no way out but the bridge's `setKiosk(false)`: a counter-top terminal. */
  kiosk: boolean;
  /** The dev server to load instead of the built renderer; null loads `dist/renderer/index.html`. */
  rendererUrl: string | null;
  /** Developer tools: on with a dev server or `--devtools`, off on a cashier's counter. */
  devTools: boolean;
}

const devServerUrl = z.url({ protocol: /^https?$/, error: 'KUPAH_RENDERER_URL must be an http(s) URL' });

export function launchOptions(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): LaunchOptions {
  const raw = env.KUPAH_RENDERER_URL?.trim();
  const rendererUrl = raw ? devServerUrl.parse(raw) : null;
  return {
    kiosk: argv.includes('--kiosk'),
    rendererUrl,
    devTools: rendererUrl !== null || argv.includes('--devtools'),
  };
}
