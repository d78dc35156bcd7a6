/**
 * A receipt as a standalone HTML document for the hidden print window: text only, escaped,
 * sized for an 80 mm thermal roll, in the receipt's reading direction. Bidirectional override
 * and isolate controls are dropped, so no name reorders the rest of its line.
 */
import { type ReceiptPrint, withoutBidiControls } from '@kupah/contracts';

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ENTITIES[c] ?? c);

const STYLE = [
  '@page{margin:0}',
  'body{font:12px/1.35 monospace;width:72mm;margin:0 auto;padding:4mm 0;color:#000}',
  'h1{font-size:14px;text-align:center;margin:0 0 3mm}',
  'p{margin:0;min-height:1.35em;white-space:pre-wrap;overflow-wrap:anywhere}',
].join('');

/** A receipt's text as printed: escaped, in the order it was stored. */
const printable = (text: string): string => escapeHtml(withoutBidiControls(text));

export function receiptHtml(receipt: ReceiptPrint): string {
  const lines = receipt.lines.map((line) => `<p>${printable(line)}</p>`).join('');
  return [
    `<!doctype html><html dir="${receipt.direction}"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    `<title>${printable(receipt.title)}</title><style>${STYLE}</style></head>`,
    `<body><h1>${printable(receipt.title)}</h1>${lines}</body></html>`,
  ].join('');
}

export const receiptDataUrl = (receipt: ReceiptPrint): string =>
  `data:text/html;charset=utf-8,${encodeURIComponent(receiptHtml(receipt))}`;
