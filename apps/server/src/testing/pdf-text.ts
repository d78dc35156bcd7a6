/** The text of a PDF as poppler's pdftotext reads it (Debian poppler-utils), for tests. */
import { execFileSync } from 'node:child_process';

/** pdftotext's output with its bidi embedding marks removed (Hebrew comes back in logical order). */
export function pdfText(pdf: Buffer | ArrayBuffer | Uint8Array): string {
  const input = Buffer.from(pdf as ArrayBuffer);
  return execFileSync('pdftotext', ['-', '-'], { input, encoding: 'utf8' }).replace(/[\u202a-\u202e]/g, '');
}
