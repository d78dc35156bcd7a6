/**
 * Receipts and statements as PDF (pdfkit), English left to right or Hebrew right to left, in the
 * DejaVu Sans font shipped by the `dejavu-fonts-ttf` package (Latin and Hebrew; no system font
 * is needed at run time).
 *
 * pdfkit draws glyphs left to right and does no bidi. Each line is therefore reordered here with
 * the Unicode Bidirectional Algorithm (`bidi-js`): its visual runs are drawn one word at a time,
 * from the left. fontkit (under pdfkit) reverses a word of Hebrew letters by itself, so such a word
 * is handed over in logical order; everything else is handed over in visual order, with brackets
 * mirrored. Text extractors (pdftotext) read the result back in logical order.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import bidiFactory from 'bidi-js';
import * as fontkit from 'fontkit';
import PDFDocument from 'pdfkit';
import type { ReceiptDocument } from './receipt-content.ts';

const require = createRequire(import.meta.url);
/**
 * Opened once per process and shared by every document (pdfkit takes a fontkit font as it is):
 * parsing the font for each document would cost more than drawing it.
 */
const openFont = (name: string) =>
  fontkit.create(readFileSync(require.resolve(`dejavu-fonts-ttf/ttf/${name}`))) as fontkit.Font;
const FONTS = { regular: openFont('DejaVuSans.ttf'), bold: openFont('DejaVuSans-Bold.ttf') };
const FONT_NAMES = { regular: FONTS.regular.postscriptName, bold: FONTS.bold.postscriptName };
type FontSource = Parameters<PDFKit.PDFDocument['registerFont']>[1];

/**
 * pdfkit lays out each word once per document and keeps the result in its font's `layoutCache`
 * (words already scaled to the font, read only afterwards). The fonts are shared, so the cache is
 * too: a statement run lays out "Kiddush" once, not ten thousand times. Emptied now and then, so
 * it cannot grow without bound.
 */
let layoutCaches = { regular: Object.create(null), bold: Object.create(null) };
let documentsSinceReset = 0;
const RESET_EVERY = 5000;

const bidi = bidiFactory();
const HEBREW = /[\u0590-\u05FF\uFB1D-\uFB4F]/;

/** Lines repeat (labels, statements, names): each is reordered once (emptied with the layout caches). */
let piecesCache = new Map<string, string[]>();

/** The pieces of one line, left to right as they are drawn (a word or a space each). */
export function visualPieces(line: string, rtl: boolean): string[] {
  const key = `${rtl ? 'r' : 'l'}${line}`;
  const cached = piecesCache.get(key);
  if (cached) return cached;
  const pieces = reorder(line, rtl);
  piecesCache.set(key, pieces);
  return pieces;
}

function reorder(line: string, rtl: boolean): string[] {
  if (!rtl && !HEBREW.test(line)) return line.split(/( )/).filter(Boolean);
  const levels = bidi.getEmbeddingLevels(line, rtl ? 'rtl' : 'ltr');
  const order = Array.from({ length: line.length }, (_, i) => i);
  for (const [start, end] of bidi.getReorderSegments(line, levels) as [number, number][]) {
    const flipped = order.slice(start, end + 1).reverse();
    order.splice(start, flipped.length, ...flipped);
  }
  const mirrored = bidi.getMirroredCharactersMap(line, levels.levels);
  // Runs of one direction, in visual order.
  const runs: { text: string; rtl: boolean }[] = [];
  for (const i of order) {
    const odd = (levels.levels[i]! & 1) === 1;
    const ch = mirrored.get(i) ?? line[i]!;
    const last = runs.at(-1);
    if (last && last.rtl === odd) last.text += ch;
    else runs.push({ text: ch, rtl: odd });
  }
  const pieces: string[] = [];
  for (const run of runs) {
    for (const word of run.text.split(/( )/).filter(Boolean)) {
      // fontkit lays a Hebrew word out right to left itself: give it back its logical order.
      pieces.push(run.rtl && HEBREW.test(word) ? [...word].reverse().join('') : word);
    }
  }
  return pieces;
}

export interface PdfOptions {
  /** US Letter for US organisations, A4 otherwise. */
  size: 'LETTER' | 'A4';
  /**
   * false: headings in the regular face too. Each face embeds its own font subset in every file,
   * which is most of the work of drawing one: year-end statements in bulk leave the bold one out.
   */
  bold?: boolean;
}

const MARGIN = 50;

/** Draw a receipt or statement; resolves to the PDF file's bytes. */
export function renderPdf(d: ReceiptDocument, opts: PdfOptions): Promise<Buffer> {
  if (++documentsSinceReset > RESET_EVERY) {
    layoutCaches = { regular: Object.create(null), bold: Object.create(null) };
    piecesCache = new Map();
    documentsSinceReset = 0;
  }
  const pdf = new PDFDocument({
    size: opts.size,
    // The default font, instead of Helvetica (whose metrics pdfkit would parse for every document).
    font: FONTS.regular as unknown as string,
    margin: MARGIN,
    info: { Title: d.title, Author: d.issuer.legalName, Subject: d.title },
    lang: d.language,
  });
  const chunks: Buffer[] = [];
  const done = new Promise<Buffer>((resolve, reject) => {
    pdf.on('data', (c: Buffer) => chunks.push(c));
    pdf.on('end', () => resolve(Buffer.concat(chunks)));
    pdf.on('error', reject);
  });
  // Registered under the fonts' own names, which pdfkit files the default font under: the same
  // embedded font is found by name, not opened a second time and compared.
  pdf.registerFont(FONT_NAMES.regular, FONTS.regular as unknown as FontSource);
  pdf.registerFont(FONT_NAMES.bold, FONTS.bold as unknown as FontSource);
  const width = pdf.page.width;
  const bottom = pdf.page.height - MARGIN;
  const left = MARGIN;
  const right = width - MARGIN;
  let y = MARGIN;

  const use = (font: 'regular' | 'bold', size: number, color = '#111111') => {
    pdf
      .font(FONT_NAMES[opts.bold === false ? 'regular' : font])
      .fontSize(size)
      .fillColor(color);
    (pdf as unknown as { _font: { layoutCache?: object } })._font.layoutCache =
      layoutCaches[opts.bold === false ? 'regular' : font];
  };
  const lineHeight = () => pdf.currentLineHeight(true) + 2;
  const room = (height: number) => {
    if (y + height > bottom) {
      pdf.addPage();
      y = MARGIN;
    }
  };

  /** One line in [x0, x1], at the start of the reading direction unless aligned to its end. */
  const drawLine = (text: string, x0: number, x1: number, align: 'start' | 'end' = 'start') => {
    const pieces = visualPieces(text, d.rtl).map((p) => ({ p, w: pdf.widthOfString(p) }));
    const total = pieces.reduce((sum, p) => sum + p.w, 0);
    const toRight = (align === 'start') === d.rtl;
    let x = toRight ? x1 - total : x0;
    for (const { p, w } of pieces) {
      if (p !== ' ') pdf.text(p, x, y, { lineBreak: false });
      x += w;
    }
  };

  /** Words of a paragraph in lines no wider than `max` (measured in logical order). */
  const wrap = (text: string, max: number): string[] => {
    const lines: string[] = [];
    let current = '';
    for (const word of text.split(/\s+/).filter(Boolean)) {
      const next = current ? `${current} ${word}` : word;
      if (current && pdf.widthOfString(next) > max) {
        lines.push(current);
        current = word;
      } else current = next;
    }
    if (current) lines.push(current);
    return lines.length > 0 ? lines : [''];
  };

  const paragraph = (text: string, x0 = left, x1 = right) => {
    for (const line of wrap(text, x1 - x0)) {
      room(lineHeight());
      drawLine(line, x0, x1);
      y += lineHeight();
    }
  };

  // The issuer.
  use('bold', 16);
  paragraph(d.issuer.legalName);
  use('regular', 10, '#333333');
  for (const line of d.issuer.address) paragraph(line);
  if (d.issuer.taxIdLine) paragraph(d.issuer.taxIdLine);
  y += 6;
  pdf.moveTo(left, y).lineTo(right, y).lineWidth(0.5).strokeColor('#999999').stroke();
  y += 14;

  use('bold', 18);
  paragraph(d.title);
  y += 4;
  if (d.notice) {
    use('bold', 10, '#a11d1d');
    paragraph(d.notice);
    y += 6;
  }

  // Label and value, the label first in the reading direction.
  const labelWidth = 130;
  const gap = 12;
  const rowsOf = (rows: ReceiptDocument['rows']) => {
    for (const row of rows) {
      use('regular', 10);
      const [lx0, lx1] = d.rtl ? [right - labelWidth, right] : [left, left + labelWidth];
      const [vx0, vx1] = d.rtl ? [left, right - labelWidth - gap] : [left + labelWidth + gap, right];
      const lines = wrap(row.value, vx1 - vx0);
      room(lineHeight() * lines.length);
      use('bold', 10, '#444444');
      drawLine(row.label, lx0, lx1);
      use('regular', 10);
      for (const line of lines) {
        drawLine(line, vx0, vx1);
        y += lineHeight();
      }
      y += 3;
    }
  };
  rowsOf(d.rows);

  if (d.table) {
    y += 8;
    // Date, receipt, what for, amount: columns in reading order (mirrored for Hebrew).
    const widths = [110, 75, 0, 95];
    widths[2] = right - left - widths.reduce((a, b) => a + b, 0);
    const columns: [number, number][] = [];
    let x = d.rtl ? right : left;
    for (const w of widths) {
      columns.push(d.rtl ? [x - w, x - 6] : [x, x + w - 6]);
      x = d.rtl ? x - w : x + w;
    }
    const drawCells = (cells: readonly string[]) => {
      cells.forEach((cell, i) => {
        const [x0, x1] = columns[i]!;
        let text = cell;
        while (text.length > 1 && pdf.widthOfString(text) > x1 - x0) text = `${text.slice(0, -2)}…`;
        drawLine(text, x0, x1, i === cells.length - 1 ? 'end' : 'start');
      });
    };
    const head = () => {
      use('bold', 9, '#444444');
      drawCells(d.table!.head);
      y += lineHeight();
      pdf.moveTo(left, y).lineTo(right, y).lineWidth(0.3).strokeColor('#bbbbbb').stroke();
      y += 4;
    };
    room(lineHeight() * 3);
    head();
    for (const row of d.table.rows) {
      use('regular', 9);
      if (y + lineHeight() > bottom) {
        pdf.addPage();
        y = MARGIN;
        head();
        use('regular', 9);
      }
      drawCells(row);
      y += lineHeight();
    }
    y += 6;
    rowsOf(d.table.totals);
  }

  if (d.statement.length > 0) {
    y += 10;
    use('regular', 9, '#222222');
    for (const s of d.statement) paragraph(s);
  }
  y += 12;
  use('regular', 10, '#555555');
  paragraph(d.footer);
  pdf.end();
  return done;
}
