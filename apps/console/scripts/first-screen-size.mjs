// The JavaScript the console's first screen loads, gzipped: the entry with its static imports,
// then Today's chunk and the chart's (what a signed-in user's first visit runs). Budget: 300 KB.
// Reads dist/.vite/manifest.json of a build (npm run build -w @kupah/console).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

export function firstScreenSize(dist) {
  const manifest = JSON.parse(readFileSync(`${dist}/.vite/manifest.json`, 'utf8'));
  const seen = new Set();
  const visit = (key, withDynamic) => {
    const chunk = manifest[key];
    if (!chunk || seen.has(key)) return;
    seen.add(key);
    for (const k of chunk.imports ?? []) visit(k, false);
    if (withDynamic) for (const k of chunk.dynamicImports ?? []) visit(k, withDynamic);
  };
  const entry = Object.keys(manifest).find((k) => manifest[k].isEntry);
  visit(entry, false);
  visit('src/screens/today.tsx', false);
  visit('src/components/chart.tsx', false);
  const files = [...seen].map((k) => manifest[k].file).filter((f) => f.endsWith('.js'));
  const gzipped = files.map((f) => ({
    file: f,
    bytes: gzipSync(readFileSync(`${dist}/${f}`), { level: 9 }).length,
  }));
  return { files: gzipped, total: gzipped.reduce((n, f) => n + f.bytes, 0) };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { files, total } = firstScreenSize(fileURLToPath(new URL('../dist', import.meta.url)));
  for (const f of files) console.log(`${(f.bytes / 1024).toFixed(1).padStart(7)} KB  ${f.file}`);
  console.log(`${(total / 1024).toFixed(1).padStart(7)} KB  first screen, gzipped (budget 300 KB)`);
}
