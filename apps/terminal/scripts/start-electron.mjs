#!/usr/bin/env node
/**
 * `npm run terminal`: starts the desktop terminal from the work tree. Builds what is missing
 * (the renderer, then main and preload; `--rebuild` builds all three again), then runs Electron
 * with apps/terminal as the app. Other arguments go to the app (`--kiosk`, `--devtools`: the
 * developer switches work only here, from the work tree; a packaged build ignores them).
 *
 * The Electron binary is looked for before anything is built: the `electron` npm package only
 * knows where the binary would be (path.txt, written by its install script), and requiring it
 * when the binary is absent starts a download. Where the install script never ran, or the binary
 * is gone, this says how to get it in one line and exits 1.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const appDir = join(dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(join(appDir, 'package.json'));

const MISSING_BINARY =
  'Electron\'s binary is not installed: run "node node_modules/electron/install.js" (needs access to github.com), ' +
  'or open the terminal in a browser at http://127.0.0.1:8787/terminal/ after "npm start".';

/** The Electron executable, or null when it is not on this machine. */
function electronBinary() {
  let packageDir;
  try {
    packageDir = dirname(require.resolve('electron/package.json'));
  } catch {
    return null;
  }
  // ELECTRON_OVERRIDE_DIST_PATH points at a local Electron build; the package honours it.
  if (!process.env.ELECTRON_OVERRIDE_DIST_PATH) {
    const pathFile = join(packageDir, 'path.txt');
    if (!existsSync(pathFile)) return null;
    if (!existsSync(join(packageDir, 'dist', readFileSync(pathFile, 'utf8').trim()))) return null;
  }
  try {
    const binary = require('electron');
    return typeof binary === 'string' && existsSync(binary) ? binary : null;
  } catch {
    return null;
  }
}

/** Runs `vite build` in the app's folder with these arguments (a config file, or the renderer's mode). */
function viteBuild(...options) {
  const args = ['vite', 'build', ...options];
  console.log(`> npx ${args.join(' ')}`);
  const result = spawnSync('npx', args, {
    cwd: appDir,
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  if (result.status !== 0) {
    console.error(`The build failed: npx ${args.join(' ')}`);
    process.exit(result.status ?? 1);
  }
}

const args = process.argv.slice(2);
const rebuild = args.includes('--rebuild');
const appArgs = args.filter((a) => a !== '--rebuild');

const binary = electronBinary();
if (!binary) {
  console.error(MISSING_BINARY);
  process.exit(1);
}

const built = (file) => !rebuild && existsSync(join(appDir, 'dist', file));
// The desktop renderer: the Electron variant of `#platform` (the preload's bridge, no service worker).
if (!built('renderer-electron/index.html')) viteBuild('--mode', 'electron');
if (!built('main/main.js')) viteBuild('-c', 'vite.main.config.ts');
if (!built('preload/preload.cjs')) viteBuild('-c', 'vite.preload.config.ts');

// Electron must run as Electron, not as the Node it embeds.
const env = { ...process.env };
delete env.ELECTRON_RUN_AS_NODE;

const child = spawn(binary, [appDir, ...appArgs], { stdio: 'inherit', env });
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => child.kill(signal));
child.on('error', (error) => {
  console.error(`Electron did not start: ${error.message}`);
  process.exit(1);
});
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
