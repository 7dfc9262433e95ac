/** The printable receipt of a bill: plain HTML, no scripts, every value escaped. */
const escapeHtml = (value: unknown) =>
  String(value ?? '').replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

interface ReceiptRecord {
  reference: string;
  status: string;
  type: string;
  billerName: string;
  customer: string;
  customerName: string | null;
  amount: number;
  fee: number;
  txRef: string | null;
  token: string | null;
  units: string | null;
  createdAt: string;
}

export function renderReceipt(record: ReceiptRecord): string {
  const money = (n: number) =>
    `NGN ${n.toLocaleString('en-NG', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const rows: Array<[string, unknown]> = [
    ['Reference', record.reference],
    ['Status', record.status],
    ['Service', `${record.billerName} (${record.type})`],
    ['Customer', record.customerName ? `${record.customer} — ${record.customerName}` : record.customer],
    ['Amount', money(record.amount)],
    ['Fee', money(record.fee)],
    ['Total', money(record.amount + record.fee)],
    ['Provider reference', record.txRef ?? '—'],
    ...(record.token
      ? ([
          ['Token', record.token],
          ['Units', record.units ?? '—'],
        ] as Array<[string, unknown]>)
      : []),
    [
      'Date',
      new Date(record.createdAt).toLocaleString('en-NG', {
        timeZone: 'Africa/Lagos',
        dateStyle: 'medium',
        timeStyle: 'short',
      }),
    ],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Receipt ${escapeHtml(record.reference)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:32rem;margin:2rem auto;color:#111}h1{font-size:1.25rem}table{width:100%;border-collapse:collapse}td{padding:.4rem;border-bottom:1px solid #ddd}td:first-child{color:#555}@media print{body{margin:0}}</style>
</head><body><h1>Payment receipt</h1><table>
${rows.map(([label, value]) => `<tr><td>${escapeHtml(label)}</td><td>${escapeHtml(value)}</td></tr>`).join('\n')}
</table></body></html>`;
}
