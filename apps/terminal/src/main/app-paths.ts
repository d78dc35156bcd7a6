/**
 * Where the bundled pieces sit, relative to the bundled main script (`dist/main/main.js`):
 * the same layout in the work tree and inside the packaged app's asar.
 */
import { join } from 'node:path';

export interface AppPaths {
  preload: string;
  rendererFile: string;
}

export function appPaths(mainDir: string): AppPaths {
  return {
    preload: join(mainDir, '..', 'preload', 'preload.cjs'),
    rendererFile: join(mainDir, '..', 'renderer-electron', 'index.html'),
  };
}
