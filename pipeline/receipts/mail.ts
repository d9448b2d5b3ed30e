import { formatRinggit } from '../../core/money.ts';
import type { OrderRow } from '../../core/store/index.ts';
import { formatKl } from '../../core/time.ts';
import { html } from '../../core/html.ts';

export interface ReceiptMail {
  subject: string;
  text: string;
  html: string;
}

/** Each method as a payer knows it, in Malay and English. */
const METHODS: Record<string, [string, string]> = {
  fpx: ['FPX (perbankan dalam talian)', 'FPX (online banking)'],
  card: ['Kad', 'Card'],
  ewallet: ['E-dompet', 'E-wallet'],
};

const rm = formatRinggit;

/**
 * A paid order's receipt: Malay first (the payers' language), then English, in one e-mail, as plain text
 * and as HTML (every value escaped). Each line is labelled in both languages so the values appear once. The
 * transaction time is the acquirer's (Malaysian time); without one, the time the payment was settled.
 */
export function receiptMail(order: OrderRow, agencyName: string, sandbox: boolean): ReceiptMail {
  const method = METHODS[order.paymentMethod ?? ''] ?? [
    order.paymentMethod ?? '-',
    order.paymentMethod ?? '-',
  ];
  const time = order.fpxTxnTime ?? formatKl(new Date(order.updatedAt));
  const rows: [string, string][] = [
    ['Agensi / Agency', agencyName],
    ['No. rujukan / Reference', order.refNo],
    ['No. pesanan / Order number', order.orderNo],
    ...(order.paymentCategory ? [['Kategori / Category', order.paymentCategory] as [string, string]] : []),
    ['Amaun / Amount', rm(order.amountSen)],
    ['Caj tambahan / Add charge', rm(order.addChargeSen)],
    ['Jumlah dibayar / Total paid', rm(order.amountSen + order.addChargeSen)],
    ['Kaedah / Method', method[0] === method[1] ? method[0] : `${method[0]} / ${method[1]}`],
    ['Bank', order.bankName ?? '-'],
    ['ID transaksi / Transaction ID', order.fpxTxnId ?? '-'],
    ['Masa transaksi / Transaction time', `${time} (UTC+8)`],
  ];
  const intro = [
    `Terima kasih. Pembayaran anda kepada ${agencyName} telah berjaya.`,
    `Thank you. Your payment to ${agencyName} was successful.`,
  ];
  const sandboxNote = ['UJIAN (sandbox): tiada wang dipindahkan.', 'TEST (sandbox): no money moved.'];
  const keep = ['Simpan resit ini untuk rekod anda.', 'Keep this receipt for your records.'];
  const width = Math.max(...rows.map(([label]) => label.length)) + 2;
  const text = [
    'Resit pembayaran / Payment receipt',
    '',
    ...(sandbox ? [...sandboxNote, ''] : []),
    ...intro,
    '',
    ...rows.map(([label, value]) => `${`${label}:`.padEnd(width)}${value}`),
    '',
    ...keep,
    '',
  ].join('\n');
  const body = html`<!doctype html>
    <html lang="ms">
      <head>
        <meta charset="utf-8" />
        <title>Resit pembayaran / Payment receipt</title>
      </head>
      <body style="font-family: sans-serif">
        <h1>Resit pembayaran <span lang="en">/ Payment receipt</span></h1>
        ${sandbox ? html`<p><strong>${sandboxNote[0]}</strong><br /><strong lang="en">${sandboxNote[1]}</strong></p>` : ''}
        <p>${intro[0]}<br /><span lang="en">${intro[1]}</span></p>
        <table>
          ${rows.map(
            ([label, value]) =>
              html`<tr>
                <th align="left">${label}</th>
                <td>${value}</td>
              </tr>`,
          )}
        </table>
        <p>${keep[0]}<br /><span lang="en">${keep[1]}</span></p>
      </body>
    </html> `;
  return {
    subject: `${sandbox ? '[SANDBOX] ' : ''}Resit pembayaran / Payment receipt: ${agencyName}, ${order.refNo}`,
    text,
    html: body.value,
  };
}
