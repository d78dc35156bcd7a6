/**
 * A receipt as an e-mail: HTML (right to left for Hebrew) and plain text, drawn from the same
 * document as the attached PDF. Pure.
 */
import type { ReceiptDocument } from './receipt-content.ts';

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

export function receiptText(d: ReceiptDocument): string {
  const lines = [d.issuer.legalName, ...d.issuer.address];
  if (d.issuer.taxIdLine) lines.push(d.issuer.taxIdLine);
  lines.push('', d.title);
  if (d.notice) lines.push('', d.notice);
  lines.push('');
  for (const r of d.rows) lines.push(`${r.label}: ${r.value}`);
  if (d.table) {
    lines.push('', d.table.head.join(' | '));
    for (const row of d.table.rows) lines.push(row.join(' | '));
    lines.push('');
    for (const r of d.table.totals) lines.push(`${r.label}: ${r.value}`);
  }
  for (const s of d.statement) lines.push('', s);
  lines.push('', d.footer, '');
  return lines.join('\n');
}

export function receiptHtml(d: ReceiptDocument): string {
  const dir = d.rtl ? 'rtl' : 'ltr';
  const align = d.rtl ? 'right' : 'left';
  const e = escapeHtml;
  const rows = d.rows
    .map(
      (r) =>
        `<tr><th style="text-align:${align};padding:3px 12px 3px 0;color:#444;white-space:nowrap;vertical-align:top">${e(r.label)}</th>` +
        `<td style="padding:3px 0"><bdi>${e(r.value)}</bdi></td></tr>`,
    )
    .join('\n');
  const table = d.table
    ? `<table style="border-collapse:collapse;margin-top:12px;width:100%">
<tr>${d.table.head.map((h) => `<th style="text-align:${align};border-bottom:1px solid #bbb;padding:3px 6px">${e(h)}</th>`).join('')}</tr>
${d.table.rows.map((row) => `<tr>${row.map((c) => `<td style="padding:3px 6px"><bdi>${e(c)}</bdi></td>`).join('')}</tr>`).join('\n')}
</table>
<table style="margin-top:8px">${d.table.totals.map((r) => `<tr><th style="text-align:${align};padding:3px 12px 3px 0">${e(r.label)}</th><td><bdi>${e(r.value)}</bdi></td></tr>`).join('')}</table>`
    : '';
  return `<!doctype html>
<html lang="${d.language}" dir="${dir}">
<head><meta charset="utf-8"><title>${e(d.title)}</title></head>
<body style="font-family:Arial,Helvetica,sans-serif;color:#111;direction:${dir};text-align:${align}">
<div style="max-width:640px">
<p style="margin:0;font-size:18px;font-weight:bold">${e(d.issuer.legalName)}</p>
${d.issuer.address.map((l) => `<p style="margin:0;color:#333">${e(l)}</p>`).join('\n')}
${d.issuer.taxIdLine ? `<p style="margin:0;color:#333">${e(d.issuer.taxIdLine)}</p>` : ''}
<h1 style="font-size:20px;margin:16px 0 8px">${e(d.title)}</h1>
${d.notice ? `<p style="color:#a11d1d;font-weight:bold">${e(d.notice)}</p>` : ''}
<table style="border-collapse:collapse">
${rows}
</table>
${table}
${d.statement.map((s) => `<p style="font-size:13px;color:#222">${e(s)}</p>`).join('\n')}
<p style="color:#555">${e(d.footer)}</p>
</div>
</body>
</html>
`;
}
