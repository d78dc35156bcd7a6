import type { ReceiptPrint } from '@kupah/contracts';
import { describe, expect, it } from 'vitest';
import { escapeHtml, receiptDataUrl, receiptHtml } from './receipt-html.ts';

describe('receipt html', () => {
  it('escapes every line, so text from a donor or a campaign is never markup', () => {
    const html = receiptHtml({
      title: 'Tom & Jerry <Foundation>',
      lines: ['<img src=x onerror=alert(1)>', `"quoted" 'single'`],
      direction: 'ltr',
    });
    expect(html).not.toContain('<img');
    expect(html).toContain('<h1>Tom &amp; Jerry &lt;Foundation&gt;</h1>');
    expect(html).toContain('<p>&lt;img src=x onerror=alert(1)&gt;</p>');
    expect(html).toContain('<p>&quot;quoted&quot; &#39;single&#39;</p>');
    expect(escapeHtml('a&b')).toBe('a&amp;b');
  });

  it('sets the reading direction and forbids scripts in the page', () => {
    const html = receiptHtml({ title: 'קבלה', lines: ['תודה רבה', ''], direction: 'rtl' });
    expect(html).toContain('<html dir="rtl">');
    expect(html).toContain('<p>תודה רבה</p><p></p>');
    expect(html).toContain("default-src 'none'");
  });

  it('drops bidi override and isolate controls, so a name cannot reorder its line (marks stay)', () => {
    const html = receiptHtml({
      title: 'Beth \u202EIsrael',
      lines: ['Donor: Dvora \u202E0001 \u2066x\u2069', 'כהן\u200F (Cohen)'],
      direction: 'ltr',
    });
    expect(html).not.toMatch(/[\u202A-\u202E\u2066-\u2069]/);
    expect(html).toContain('<p>Donor: Dvora 0001 x</p>');
    expect(html).toContain('<h1>Beth Israel</h1>');
    expect(html).toContain('<p>כהן\u200F (Cohen)</p>');
  });

  it('travels as a data: URL', () => {
    const receipt: ReceiptPrint = { title: 'R', lines: ['100 USD'], direction: 'ltr' };
    const url = receiptDataUrl(receipt);
    expect(decodeURIComponent(url.slice('data:text/html;charset=utf-8,'.length))).toBe(receiptHtml(receipt));
  });
});
