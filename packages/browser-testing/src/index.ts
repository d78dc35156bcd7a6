/**
 * Debian's Chromium for tests that must run in a real browser (the envelope's WebCrypto, the
 * terminal end to end). Tests use the system package rather than a browser Playwright downloads,
 * so CI needs nothing but `apt-get install chromium`, and no test reaches the network to set up.
 */
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Flags that keep a test browser quiet and deterministic: no GPU (containers have none), no
 * sandbox (it needs user namespaces that containers often lack), and nothing running in the
 * background that would reach the network (updates, sync, first-run pages).
 */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

export function chromiumAvailable(): boolean {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Under CI a missing browser is a broken machine, not a reason to skip: throw so the run fails.
 * Elsewhere it returns quietly and the caller skips (`describe.skipIf(!chromiumAvailable())`).
 */
export function requireChromium(): void {
  if (process.env.CI && !chromiumAvailable()) {
    throw new Error(
      `Debian's chromium is required: apt-get install -y chromium (not found at ${CHROMIUM_PATH}; set CHROMIUM_PATH to use another)`,
    );
  }
}

export interface LaunchedChromium {
  /** A persistent context on a fresh profile: `browser.newPage()`. */
  browser: BrowserContext;
  /** Closes the browser and deletes its profile directory. */
  close(): Promise<void>;
}

/** Starts Chromium on a fresh temporary profile, so no test sees another's storage. */
export async function launchChromium(opts: { headless?: boolean } = {}): Promise<LaunchedChromium> {
  const headless = opts.headless ?? true;
  const userDataDir = await mkdtemp(join(tmpdir(), 'kupah-chromium-'));
  const removeProfile = () => rm(userDataDir, { recursive: true, force: true });
  let browser: BrowserContext;
  try {
    browser = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM_PATH,
      headless,
      args: headless ? ['--headless', ...ARGS] : ARGS,
    });
  } catch (err) {
    await removeProfile();
    throw err;
  }
  return {
    browser,
    async close() {
      try {
        await browser.close();
      } finally {
        await removeProfile();
      }
    },
  };
}
