/**
 * The README's pictures of a receipt: the first page of an English and a Hebrew receipt PDF,
 * drawn by the server's own code from sample facts, rendered with pdftoppm (poppler-utils) at
 * 60 dpi into docs/receipt-en.png and docs/receipt-he.png.
 *
 *   npx tsx apps/server/scripts/receipt-pages.ts
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { orgSettings } from '../src/orgs/settings.ts';
import { type ReceiptFacts, receiptDocument } from '../src/receipts/receipt-content.ts';
import { renderPdf } from '../src/receipts/receipt-pdf.ts';

const docs = join(import.meta.dirname, '..', '..', '..', 'docs');
const work = mkdtempSync(join(tmpdir(), 'receipt-pages-'));

const base: Omit<ReceiptFacts, 'donor' | 'campaign' | 'reasons' | 'note' | 'currency'> = {
  receiptNum: 'R100042',
  status: 'Success',
  amountMinor: 43_200,
  method: 'Credit_Card',
  brand: 'Visa',
  last4: '4242',
  paidAt: new Date('2026-11-23T15:30:00Z'),
  voidedAt: null,
  refundedMinor: 0,
  refundedAt: null,
  isAnonymous: false,
  schedule: {
    scheduleNum: 5001,
    frequency: 'Monthly_Hebrew',
    count: 12,
    firstMinor: 3600,
    perPaymentMinor: 3600,
    totalMinor: 43_200,
    instalment: 1,
    nextDate: '2026-12-23',
  },
};

const samples = [
  {
    file: 'receipt-en.png',
    org: {
      name: 'Chesed',
      settings: orgSettings.parse({
        receipts: {
          legalName: 'Congregation Chesed Inc.',
          address: '1200 Ocean Parkway\nBrooklyn, NY 11230',
          taxId: '12-3456789',
        },
      }),
    },
    language: 'en' as const,
    facts: {
      ...base,
      amountMinor: 3600,
      currency: 'USD',
      donor: {
        accountNum: 'D100001',
        firstName: 'Moshe',
        lastName: 'Cohen',
        firstNameHebrew: null,
        lastNameHebrew: null,
      },
      campaign: { number: 1, name: 'Building Fund' },
      reasons: [{ number: 1, name: 'Kiddush', nameHebrew: 'קידוש', amountMinor: 3600 }],
      note: 'In honour of the bar mitzvah of Yosef',
    },
  },
  {
    file: 'receipt-he.png',
    org: {
      name: 'Chesed',
      settings: orgSettings.parse({
        il: true,
        timezone: 'Asia/Jerusalem',
        receipts: {
          legalName: 'עמותת חסד ואמת',
          address: 'רחוב הרצל 12\nירושלים 9100001',
          taxId: '580123456',
        },
      }),
    },
    language: 'he' as const,
    facts: {
      ...base,
      amountMinor: 18_000,
      currency: 'ILS',
      schedule: { ...base.schedule!, firstMinor: 18_000, perPaymentMinor: 18_000, totalMinor: 216_000 },
      donor: {
        accountNum: 'D100002',
        firstName: null,
        lastName: null,
        firstNameHebrew: 'שרה',
        lastNameHebrew: 'לוי',
      },
      campaign: { number: 2, name: 'בניין בית הכנסת' },
      reasons: [
        { number: 1, name: null, nameHebrew: 'צדקה', amountMinor: 10_000 },
        { number: 2, name: null, nameHebrew: 'קידוש (שבת)', amountMinor: 8000 },
      ],
      note: 'לרפואה שלמה',
    },
  },
];

try {
  for (const s of samples) {
    const pdf = await renderPdf(receiptDocument(s.facts, s.org, s.language, 'receipt'), {
      size: s.org.settings.il ? 'A4' : 'LETTER',
    });
    const pdfFile = join(work, `${s.language}.pdf`);
    writeFileSync(pdfFile, pdf);
    execFileSync('pdftoppm', [
      '-png',
      '-r',
      '60',
      '-f',
      '1',
      '-l',
      '1',
      '-singlefile',
      pdfFile,
      join(work, s.language),
    ]);
    renameSync(join(work, `${s.language}.png`), join(docs, s.file));
    console.log(`docs/${s.file}`);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
