// Before `npm start`: build the terminal's web build (served at /terminal/) if it is not built yet.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const terminal = fileURLToPath(new URL('..', import.meta.url));
if (!existsSync(`${terminal}/dist/renderer/index.html`)) {
  console.error('Building the terminal web build (apps/terminal/dist/renderer) once…');
  const r = spawnSync('npx', ['vite', 'build', '--logLevel', 'warn'], { cwd: terminal, stdio: 'inherit' });
  if (r.status !== 0) {
    console.error('The terminal web build failed; the server starts without /terminal/.');
  }
}
