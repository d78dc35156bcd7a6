/**
 * How long `enqueue` of a card donation takes (validate + seal + write), over 1,000 donations on
 * fake-indexeddb in Node: the same code the renderer runs, on the injected IndexedDB. Target:
 * median ≤ 10 ms. Offline the device limit adds a read of every unsent item, so both are shown.
 *
 * The browser figure is `npm run bench -- terminal`; this one isolates the data layer in Node:
 *
 *   npx tsx bench/terminal-enqueue.ts [count]
 */

import { createTerminalData } from '@kupah/terminal-core';
import { cardCharge, createFakeDeviceServer, testBridge } from '@kupah/terminal-core/testing';
import { IDBFactory, IDBKeyRange } from 'fake-indexeddb';

const count = Number(process.argv[2] ?? 1000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function run(label: string, online: boolean): Promise<void> {
  const server = await createFakeDeviceServer({
    settings: { offline: { perPaymentMinor: 1_000_000, totalMinor: 1_000_000_000, expiryHours: 72 } },
  });
  const data = createTerminalData({
    bridge: testBridge(),
    dbName: `bench-${label}`,
    indexedDB: new IDBFactory(),
    IDBKeyRange,
    fetch: server.fetch,
    online: () => online,
  });
  await data.pair(server.url, server.pairingCode, 'Bench kiosk');
  // Warm-up: key import, zod and Dexie first-use costs are not what a cashier waits for each time.
  for (let i = 0; i < 20; i++) await data.enqueue(cardCharge({ amount: 1 + (i % 50) }));
  const times: number[] = [];
  for (let i = 0; i < count; i++) {
    const entry = cardCharge({ amount: 5 + (i % 50), donor: { firstName: 'Bench', lastName: `Donor ${i}` } });
    const t0 = performance.now();
    await data.enqueue(entry);
    times.push(performance.now() - t0);
  }
  data.close();
  const sorted = [...times].sort((a, b) => a - b);
  const mean = times.reduce((s, t) => s + t, 0) / times.length;
  const f = (n: number) => `${n.toFixed(2)} ms`;
  console.log(
    `${label.padEnd(8)} n=${count}  median ${f(percentile(sorted, 50))}  p95 ${f(percentile(sorted, 95))}  p99 ${f(percentile(sorted, 99))}  mean ${f(mean)}  max ${f(sorted.at(-1) ?? 0)}`,
  );
}

await run('online', true);
await run('offline', false);
