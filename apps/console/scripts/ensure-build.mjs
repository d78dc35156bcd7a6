// Before `npm start`: build the console (served at /console/) if it is not built yet.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const consoleDir = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${consoleDir}/dist/index.html`)) {
  console.error('Building the console (apps/console/dist) once…');
  const r = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: consoleDir, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('The console build failed; the server starts without /console/.');
  }
}
