/**
 * A receipt laid out in a document of its own (the hidden print frame): built with DOM calls and
 * textContent, so nothing in a donor's name or a campaign's text is ever parsed as HTML. Sized
 * for an 80 mm thermal roll, in the receipt's reading direction. Bidirectional override and
 * isolate controls are dropped (names are refused with them, but older records may have one), so
 * no name reorders the rest of its line: the receipt reads in the order the text was stored.
 */
import { type ReceiptPrint, withoutBidiControls } from '@kupah/contracts';

const RECEIPT_CSS = [
  '@page{margin:0}',
  'body{font:12px/1.35 monospace;width:72mm;margin:0 auto;padding:4mm 0;color:#000}',
  'h1{font-size:14px;text-align:center;margin:0 0 3mm}',
  'p{margin:0;min-height:1.35em;white-space:pre-wrap;overflow-wrap:anywhere}',
].join('');

export function writeReceipt(doc: Document, receipt: ReceiptPrint): void {
  doc.documentElement.dir = receipt.direction;
  const titleText = withoutBidiControls(receipt.title);
  doc.title = titleText;
  const style = doc.createElement('style');
  style.textContent = RECEIPT_CSS;
  doc.head.append(style);
  const title = doc.createElement('h1');
  title.textContent = titleText;
  const lines = receipt.lines.map((text) => {
    const line = doc.createElement('p');
    line.textContent = withoutBidiControls(text);
    return line;
  });
  doc.body.replaceChildren(title, ...lines);
}
