import type { ErrorCode } from '../../core/errors.ts';
import type { PaymentMethod } from '../../core/store/index.ts';

/** The languages of the payer pages (docs/checkout.md, "Languages"). */
export type Lang = 'en' | 'ms';
export const LANGS: readonly Lang[] = ['en', 'ms'];

/** What happened, and what the payer can do next: one error page in plain words. */
export interface PayerError {
  what: string;
  next: string;
}

/** Every word a payer reads, in one place: English first, Malay checked against it by the type. */
const en = {
  langName: 'English',
  footer: 'amil payment gateway',
  sandboxBanner: 'Sandbox: this is a test payment service. No real money moves.',
  payTitle: (agency: string) => `Pay ${agency}`,
  payTo: 'Pay to',
  for: 'For',
  reference: 'Reference',
  amount: 'Amount',
  addCharge: 'Add charge',
  total: 'Total',
  orderNo: 'Order number',
  status: 'Status',
  method: 'Payment method',
  bank: 'Bank',
  txnId: 'Transaction ID',
  time: 'Time',
  methods: { fpx: 'FPX online banking', card: 'Credit or debit card', ewallet: 'E-wallet' } satisfies Record<
    PaymentMethod,
    string
  >,
  withCharge: (charge: string, total: string) => `(add charge ${charge}, total ${total})`,
  fpxBank: 'Your bank',
  chooseBank: 'Choose your bank',
  payNow: 'Pay now',
  orderNote: (orderNo: string, email: string) => `Order ${orderNo}. A receipt goes to ${email}.`,
  cancel: 'Cancel and go back',
  emailLabel: 'Your e-mail (the receipt goes here)',
  emailInvalid: 'Enter a valid e-mail address, e.g. name@example.my.',
  continue: 'Continue to payment',
  pleaseCheck: 'Please check:',
  statusSuccess: 'Successful',
  statusFailed: 'Not successful',
  statusPending: 'Pending',
  success: 'Payment successful',
  failed: 'Payment not successful',
  pending: 'Payment pending',
  receiptSent: (email: string) => `A receipt is on its way to ${email}.`,
  noMoneyTaken: 'No money was taken from your account.',
  reasons: {
    '51': 'Your bank declined the payment: there is not enough money in the account.',
    BC: 'You cancelled the payment at the bank.',
    XP: 'The payment was not completed in time.',
    other: 'Your bank did not approve the payment.',
  } as Record<string, string>,
  tryAgain: 'Try again',
  tryAgainLink: 'Pay this link again with a new attempt.',
  tryAgainMerchant: (agency: string) => `Return to ${agency} to start a new payment.`,
  returnTo: (agency: string) => `Return to ${agency}`,
  returningIn: (agency: string, seconds: number) =>
    `Taking you back to ${agency} in ${seconds} seconds. If nothing happens, press the button.`,
  returnNoScript: (agency: string) => `Press the button to return to ${agency}.`,
  pendingNote: (agency: string) =>
    `Your bank has not confirmed this payment yet. Please do not pay again: this page checks again every 10 seconds, and ${agency} is told as soon as the bank answers.`,
  sandboxTitle: 'Sandbox bank',
  sandboxNote: (bank: string) =>
    `This is the sandbox acquirer, standing in for ${bank}. No real money moves.`,
  sandboxAwaiting: 'awaiting your choice',
  sandboxPendingAs: (code: string) => `pending (${code})`,
  sandboxPick: 'Outcome of this payment',
  sandboxResolve: 'Resolve the pending payment',
  sandboxOutcomes: {
    '00': 'Approve (00)',
    '09': 'Leave pending (09)',
    '99': 'Leave pending (99)',
    '76': 'Leave pending (76)',
    '51': 'Decline: insufficient funds (51)',
    BC: 'Payer cancels (BC)',
  } as Record<string, string>,
  sandboxDecided: (code: string) => `This payment is decided (${code}).`,
  confirm: 'Confirm',
  errorTitle: 'This payment cannot go on',
  supportRef: (code: string, requestId: string) => `For support: ${code}, request ${requestId}`,
  notFoundTitle: 'Page not found',
  landingTitle: 'amil payment gateway',
  landingIntro: 'This service takes zakat payments for agencies and reconciles them with the bank.',
  landingShop: 'Demo shop: pay a test order end to end',
  landingDocs: 'Documentation',
  landingOpenApi: 'OpenAPI document (for integrators)',
  landingDashboard: 'Dashboard: coming',
  docsTitle: 'Documentation',
  errors: {
    'signature-missing': signatureProblem(),
    'signature-mismatch': signatureProblem(),
    'exp-missing': signatureProblem(),
    'exp-malformed': signatureProblem(),
    'exp-expired': {
      what: 'This payment request has expired: it was not sent on in time. No money was taken.',
      next: 'Go back to the shop or website and start the payment again.',
    },
    'exp-too-far-ahead': signatureProblem(),
    forbidden: {
      what: 'This payment page has expired, or its address is incomplete.',
      next: 'Start again from where you began: the shop, website, link or QR code.',
    },
    'pay-link-tampered': {
      what: 'This payment link was changed after it was made, so it cannot be used.',
      next: 'Ask the organisation that gave you the link for a new one.',
    },
    'not-found': {
      what: 'This page does not exist.',
      next: 'Check the address, or start again from the link, QR code or website you came from.',
    },
    'order-conflict': {
      what: 'This order already exists for a different amount, so it was stopped. No money was taken.',
      next: 'Go back to the shop or website and start the payment again. If it happens again, tell them.',
    },
    'order-already-paid': {
      what: 'This order has already been paid.',
      next: 'There is nothing more to pay. Keep the receipt you were sent.',
    },
    'order-failed': {
      what: 'This order was not paid, and it cannot be paid again.',
      next: 'Go back to the shop or website and start a new payment.',
    },
    'pay-link-paid': {
      what: 'This link has been paid already.',
      next: 'There is nothing more to pay.',
    },
    'pay-link-in-progress': {
      what: 'Someone is paying this link right now.',
      next: 'If that payment does not go through, this link can be paid again in a few minutes.',
    },
    'validation-failed': {
      what: 'Some details of this payment are not valid.',
      next: 'Correct what is listed below. If the details came from a shop or website, go back and start again there.',
    },
    'too-many-requests': {
      what: 'Too many requests from your network in a short time.',
      next: 'Wait a minute, then try again.',
    },
    'payments-not-configured': {
      what: 'Payments are not configured on this service yet.',
      next: 'Please pay another way, or come back later.',
    },
  } as Partial<Record<ErrorCode, PayerError>>,
  clientError: {
    what: 'This request could not be handled.',
    next: 'Go back to the page you came from and start again.',
  } satisfies PayerError,
  serverError: {
    what: 'Something went wrong on our side. No money was taken.',
    next: 'Please try again in a few minutes.',
  } satisfies PayerError,
};

function signatureProblem(): PayerError {
  return {
    what: 'This payment request could not be checked, so it was stopped. No money was taken.',
    next: 'Go back to the shop or website and start the payment again. If it happens again, tell them.',
  };
}

export type Messages = typeof en;

const ms: Messages = {
  langName: 'Bahasa Melayu',
  footer: 'gerbang pembayaran amil',
  sandboxBanner: 'Kotak pasir: ini perkhidmatan pembayaran ujian. Tiada wang sebenar berpindah.',
  payTitle: (agency) => `Bayar kepada ${agency}`,
  payTo: 'Bayar kepada',
  for: 'Untuk',
  reference: 'Rujukan',
  amount: 'Amaun',
  addCharge: 'Caj tambahan',
  total: 'Jumlah',
  orderNo: 'Nombor pesanan',
  status: 'Status',
  method: 'Kaedah pembayaran',
  bank: 'Bank',
  txnId: 'ID transaksi',
  time: 'Masa',
  methods: { fpx: 'Perbankan dalam talian FPX', card: 'Kad kredit atau debit', ewallet: 'E-dompet' },
  withCharge: (charge, total) => `(caj tambahan ${charge}, jumlah ${total})`,
  fpxBank: 'Bank anda',
  chooseBank: 'Pilih bank anda',
  payNow: 'Bayar sekarang',
  orderNote: (orderNo, email) => `Pesanan ${orderNo}. Resit dihantar ke ${email}.`,
  cancel: 'Batal dan kembali',
  emailLabel: 'E-mel anda (resit dihantar ke sini)',
  emailInvalid: 'Masukkan alamat e-mel yang sah, cth. nama@example.my.',
  continue: 'Teruskan ke pembayaran',
  pleaseCheck: 'Sila semak:',
  statusSuccess: 'Berjaya',
  statusFailed: 'Tidak berjaya',
  statusPending: 'Belum selesai',
  success: 'Pembayaran berjaya',
  failed: 'Pembayaran tidak berjaya',
  pending: 'Pembayaran belum selesai',
  receiptSent: (email) => `Resit sedang dihantar ke ${email}.`,
  noMoneyTaken: 'Tiada wang diambil daripada akaun anda.',
  reasons: {
    '51': 'Bank anda menolak pembayaran ini: baki akaun tidak mencukupi.',
    BC: 'Anda telah membatalkan pembayaran di bank.',
    XP: 'Pembayaran tidak diselesaikan dalam masa yang ditetapkan.',
    other: 'Bank anda tidak meluluskan pembayaran ini.',
  },
  tryAgain: 'Cuba lagi',
  tryAgainLink: 'Bayar pautan ini sekali lagi dengan cubaan baharu.',
  tryAgainMerchant: (agency) => `Kembali ke ${agency} untuk memulakan pembayaran baharu.`,
  returnTo: (agency) => `Kembali ke ${agency}`,
  returningIn: (agency, seconds) =>
    `Anda akan dibawa kembali ke ${agency} dalam ${seconds} saat. Jika tiada apa-apa berlaku, tekan butang.`,
  returnNoScript: (agency) => `Tekan butang untuk kembali ke ${agency}.`,
  pendingNote: (agency) =>
    `Bank anda belum mengesahkan pembayaran ini. Jangan bayar sekali lagi: halaman ini menyemak semula setiap 10 saat, dan ${agency} dimaklumkan sebaik sahaja bank menjawab.`,
  sandboxTitle: 'Bank kotak pasir',
  sandboxNote: (bank) =>
    `Ini ialah pemeroleh kotak pasir, menggantikan ${bank}. Tiada wang sebenar berpindah.`,
  sandboxAwaiting: 'menunggu pilihan anda',
  sandboxPendingAs: (code) => `belum selesai (${code})`,
  sandboxPick: 'Keputusan pembayaran ini',
  sandboxResolve: 'Selesaikan pembayaran yang belum selesai',
  sandboxOutcomes: {
    '00': 'Luluskan (00)',
    '09': 'Biarkan belum selesai (09)',
    '99': 'Biarkan belum selesai (99)',
    '76': 'Biarkan belum selesai (76)',
    '51': 'Tolak: baki tidak mencukupi (51)',
    BC: 'Pembayar membatalkan (BC)',
  },
  sandboxDecided: (code) => `Pembayaran ini sudah diputuskan (${code}).`,
  confirm: 'Sahkan',
  errorTitle: 'Pembayaran ini tidak dapat diteruskan',
  supportRef: (code, requestId) => `Untuk bantuan: ${code}, permintaan ${requestId}`,
  notFoundTitle: 'Halaman tidak dijumpai',
  landingTitle: 'gerbang pembayaran amil',
  landingIntro: 'Perkhidmatan ini menerima bayaran zakat untuk agensi dan menyelaraskannya dengan bank.',
  landingShop: 'Kedai demo: bayar pesanan ujian dari awal hingga akhir',
  landingDocs: 'Dokumentasi',
  landingOpenApi: 'Dokumen OpenAPI (untuk integrasi)',
  landingDashboard: 'Papan pemuka: akan datang',
  docsTitle: 'Dokumentasi',
  errors: {
    'signature-missing': signatureProblemMs(),
    'signature-mismatch': signatureProblemMs(),
    'exp-missing': signatureProblemMs(),
    'exp-malformed': signatureProblemMs(),
    'exp-expired': {
      what: 'Permintaan pembayaran ini telah tamat tempoh: ia tidak dihantar tepat pada masanya. Tiada wang diambil.',
      next: 'Kembali ke kedai atau laman web dan mulakan pembayaran sekali lagi.',
    },
    'exp-too-far-ahead': signatureProblemMs(),
    forbidden: {
      what: 'Halaman pembayaran ini telah tamat tempoh, atau alamatnya tidak lengkap.',
      next: 'Mulakan semula dari tempat anda bermula: kedai, laman web, pautan atau kod QR.',
    },
    'pay-link-tampered': {
      what: 'Pautan pembayaran ini telah diubah selepas ia dibuat, jadi ia tidak boleh digunakan.',
      next: 'Minta pautan baharu daripada organisasi yang memberikannya.',
    },
    'not-found': {
      what: 'Halaman ini tidak wujud.',
      next: 'Semak alamat, atau mulakan semula dari pautan, kod QR atau laman web asal anda.',
    },
    'order-conflict': {
      what: 'Pesanan ini sudah wujud dengan amaun yang berbeza, jadi ia dihentikan. Tiada wang diambil.',
      next: 'Kembali ke kedai atau laman web dan mulakan pembayaran sekali lagi. Jika berulang, maklumkan kepada mereka.',
    },
    'order-already-paid': {
      what: 'Pesanan ini sudah dibayar.',
      next: 'Tiada apa-apa lagi yang perlu dibayar. Simpan resit yang telah dihantar kepada anda.',
    },
    'order-failed': {
      what: 'Pesanan ini tidak dibayar, dan ia tidak boleh dibayar semula.',
      next: 'Kembali ke kedai atau laman web dan mulakan pembayaran baharu.',
    },
    'pay-link-paid': {
      what: 'Pautan ini sudah dibayar.',
      next: 'Tiada apa-apa lagi yang perlu dibayar.',
    },
    'pay-link-in-progress': {
      what: 'Seseorang sedang membayar pautan ini sekarang.',
      next: 'Jika pembayaran itu tidak berjaya, pautan ini boleh dibayar semula dalam beberapa minit.',
    },
    'validation-failed': {
      what: 'Sebahagian butiran pembayaran ini tidak sah.',
      next: 'Betulkan perkara yang disenaraikan di bawah. Jika butiran datang dari kedai atau laman web, kembali dan mulakan semula di sana.',
    },
    'too-many-requests': {
      what: 'Terlalu banyak permintaan dari rangkaian anda dalam masa yang singkat.',
      next: 'Tunggu seminit, kemudian cuba lagi.',
    },
    'payments-not-configured': {
      what: 'Pembayaran belum disediakan pada perkhidmatan ini.',
      next: 'Sila bayar dengan cara lain, atau kembali kemudian.',
    },
  },
  clientError: {
    what: 'Permintaan ini tidak dapat dikendalikan.',
    next: 'Kembali ke halaman asal anda dan mulakan semula.',
  },
  serverError: {
    what: 'Berlaku masalah di pihak kami. Tiada wang diambil.',
    next: 'Sila cuba lagi dalam beberapa minit.',
  },
};

function signatureProblemMs(): PayerError {
  return {
    what: 'Permintaan pembayaran ini tidak dapat disemak, jadi ia dihentikan. Tiada wang diambil.',
    next: 'Kembali ke kedai atau laman web dan mulakan pembayaran sekali lagi. Jika berulang, maklumkan kepada mereka.',
  };
}

const MESSAGES: Record<Lang, Messages> = { en, ms };

/** The messages of a language. */
export function messages(lang: Lang): Messages {
  return MESSAGES[lang];
}

/** The payer message of an error code: its own, else a plain one for its class of status. */
export function payerError(lang: Lang, code: ErrorCode, status: number): PayerError {
  const m = MESSAGES[lang];
  return m.errors[code] ?? (status >= 500 ? m.serverError : m.clientError);
}

const MONTHS: Record<Lang, readonly string[]> = {
  en: ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'],
  ms: ['Jan', 'Feb', 'Mac', 'Apr', 'Mei', 'Jun', 'Jul', 'Ogo', 'Sep', 'Okt', 'Nov', 'Dis'],
};

/** Sen as Malaysians write ringgit in both languages: `RM 1,234.50`. */
export { formatRinggit } from '../../core/money.ts';

/** A Kuala Lumpur wall time (`YYYY-MM-DD HH:mm:ss`, as acquirers report it) as `24 Nov 2026, 14:05`. */
export function formatKlWallTime(lang: Lang, wallTime: string): string {
  const match = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})/.exec(wallTime);
  if (!match) return wallTime;
  const [, year, month, day, hour, minute] = match;
  return `${Number(day)} ${MONTHS[lang][Number(month) - 1] ?? month} ${year}, ${hour}:${minute}`;
}
