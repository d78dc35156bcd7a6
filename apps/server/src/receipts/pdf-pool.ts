/**
 * Drawing many PDFs at once (year-end statements): a pool of worker threads, one per core, each
 * drawing with `renderPdf`. When workers cannot be started (tsx cannot be found, or a test
 * runner's module loader), the documents are drawn in this thread instead.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { ReceiptDocument } from './receipt-content.ts';
import { type PdfOptions, renderPdf } from './receipt-pdf.ts';

export interface PdfRenderer {
  /** Worker threads drawing (0: this thread). */
  threads: number;
  render(doc: ReceiptDocument, opts: PdfOptions): Promise<Buffer>;
  close(): Promise<void>;
}

export const inThisThread = (): PdfRenderer => ({
  threads: 0,
  render: renderPdf,
  close: async () => {},
});

type Pending = { resolve: (b: Buffer) => void; reject: (e: Error) => void };

/**
 * The worker's start: the server runs its TypeScript through tsx, whose loader a worker thread
 * does not inherit, so the worker registers it before importing `pdf-worker.ts`.
 */
function workerSource(): string | null {
  try {
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./pdf-worker.ts', import.meta.url).href;
    return `import(${JSON.stringify(tsx)}).then(({ register }) => { register(); return import(${JSON.stringify(entry)}); })`;
  } catch {
    return null;
  }
}

async function startWorker(): Promise<Worker | null> {
  const source = workerSource();
  if (source === null) return null;
  const worker = new Worker(source, { eval: true });
  const ready = await new Promise<boolean>((resolve) => {
    const t = setTimeout(() => resolve(false), 15_000);
    worker.once('message', () => {
      clearTimeout(t);
      resolve(true);
    });
    worker.once('error', () => {
      clearTimeout(t);
      resolve(false);
    });
  });
  if (!ready) {
    await worker.terminate();
    return null;
  }
  return worker;
}

/** A pool of `size` workers (default: one per core, at most 8); this thread when none starts. */
export async function pdfPool(size = Math.min(8, availableParallelism())): Promise<PdfRenderer> {
  if (size < 2) return inThisThread();
  const started = await Promise.all(Array.from({ length: size }, startWorker));
  const workers = started.filter((w): w is Worker => w !== null);
  if (workers.length === 0) return inThisThread();
  const pending = new Map<number, Pending>();
  const load = new Map<Worker, number>(workers.map((w) => [w, 0]));
  let nextId = 0;
  for (const w of workers) {
    w.on('message', (m: { id: number; pdf?: Uint8Array; error?: string }) => {
      const p = pending.get(m.id);
      if (!p) return;
      pending.delete(m.id);
      load.set(w, (load.get(w) ?? 1) - 1);
      if (m.pdf) p.resolve(Buffer.from(m.pdf.buffer, m.pdf.byteOffset, m.pdf.byteLength));
      else p.reject(new Error(m.error ?? 'the PDF worker failed'));
    });
    w.on('error', (err) => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    });
  }
  return {
    threads: workers.length,
    render(doc, opts) {
      // The least busy worker takes it.
      const w = workers.reduce((a, b) => ((load.get(a) ?? 0) <= (load.get(b) ?? 0) ? a : b));
      load.set(w, (load.get(w) ?? 0) + 1);
      const id = nextId++;
      return new Promise<Buffer>((resolve, reject) => {
        pending.set(id, { resolve, reject });
        w.postMessage({ id, doc, opts });
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
