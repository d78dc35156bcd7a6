/** A worker thread drawing PDFs for `pdf-pool.ts` (statements in bulk use every core). */
import { parentPort } from 'node:worker_threads';
import type { ReceiptDocument } from './receipt-content.ts';
import { type PdfOptions, renderPdf } from './receipt-pdf.ts';

const port = parentPort;
if (!port) throw new Error('pdf-worker.ts runs as a worker thread');
port.on('message', async (m: { id: number; doc: ReceiptDocument; opts: PdfOptions }) => {
  try {
    // A copy of its own, so its memory can be handed over rather than copied again.
    const pdf = new Uint8Array(await renderPdf(m.doc, m.opts));
    port.postMessage({ id: m.id, pdf }, [pdf.buffer]);
  } catch (err) {
    port.postMessage({ id: m.id, error: err instanceof Error ? err.message : String(err) });
  }
});
port.postMessage({ ready: true });
