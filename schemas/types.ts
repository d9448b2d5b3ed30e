/* Generated from schemas/*.json by schemas/generate-types.ts. Do not edit. */

/**
 * accepted: a new orderno, stored. duplicate: identical to the stored record or to an earlier version of it (a stale retry); nothing changed. updated: a stored pending became success or failed (spec 3); history kept. conflict: differs from every stored version and is not an allowed transition; not applied, kept as an anomaly for ops.
 */
export interface BankRecordResult {
  /**
   * Position of the record in the request.
   */
  index: number;
  orderno: string;
  outcome: 'accepted' | 'duplicate' | 'updated' | 'conflict';
  /**
   * The stored status of the posting after this record was judged.
   */
  status: 'success' | 'pending' | 'failed';
  /**
   * Present on conflicts: the anomaly ops will resolve.
   */
  anomaly_id?: string;
}
/**
 * One zakat posting from the partner bank (spec 2.5). Unknown properties are refused: a misspelt field silently dropped would be data lost.
 */
export interface BankTransaction {
  /**
   * Bank agency code. BANKLZS and BANKPPZ route to their zakat agencies; BANK marks live test entries. The accepted list is configuration (BANK_AGENCY_ROUTES).
   */
  agency: 'BANKLZS' | 'BANKPPZ' | 'BANK';
  /**
   * The bank's unique transaction number; the idempotency key of the posting. Printable ASCII without spaces.
   */
  orderno: string;
  /**
   * Ringgit, at least 0, at most two decimals (10, 10.5 and 10.50 are accepted; 10.505 is not).
   */
  amount: number;
  /**
   * Customer name; not blank.
   */
  name: string;
  email: string;
  /**
   * ISO 8601 date-time with a mandatory offset: Z, +hh:mm, or +hhmm and +hh (read as +hh:mm). The T separator is required.
   */
  time: string;
  status: 'success' | 'pending' | 'failed';
  data: BankZakatData;
}
/**
 * Zakat details; every field optional. An empty string in a free-text field (zakat_name, zakat_address, zakat_city) is stored as absent; elsewhere omit the field rather than sending an empty string.
 */
export interface BankZakatData {
  email?: string;
  /**
   * Free text; an empty string is stored as absent.
   */
  zakat_name?: string;
  /**
   * Malaysian IC (MyKad) number, 12 digits, no dashes.
   */
  zakat_ic_no?: string;
  zakat_state?:
    | 'johor'
    | 'kedah'
    | 'kelantan'
    | 'melaka'
    | 'negeri_sembilan'
    | 'pahang'
    | 'pulau_pinang'
    | 'perak'
    | 'perlis'
    | 'sabah'
    | 'sarawak'
    | 'selangor'
    | 'terengganu'
    | 'kuala_lumpur'
    | 'labuan'
    | 'putrajaya';
  zakat_type?:
    | 'fitrah'
    | 'zakat_emas'
    | 'zakat_fitrah'
    | 'zakat_kwsp'
    | 'zakat_padi'
    | 'zakat_pendapatan'
    | 'zakat_perak'
    | 'zakat_perniagaan'
    | 'zakat_pertanian'
    | 'zakat_qada'
    | 'zakat_rikaz'
    | 'zakat_saham'
    | 'zakat_simpanan'
    | 'zakat_ternakan';
  zakat_year?: string;
  /**
   * 10 to 12 digits.
   */
  zakat_phone?: string;
  /**
   * Free text; an empty string is stored as absent.
   */
  zakat_address?: string;
  zakat_postcode?: string;
  /**
   * Free text; an empty string is stored as absent.
   */
  zakat_city?: string;
  /**
   * Ringgit as a numeric string with optional decimals (at most two): "100", "100.5", "100.50".
   */
  zakat_amount?: string;
  /**
   * Fitrah rate in ringgit per dependant, a numeric string (at most two decimals).
   */
  zakat_rate?: string;
  /**
   * Number of dependants paid for, a whole number as a string.
   */
  zakat_dependant?: string;
}
/**
 * A batch of zakat postings from the partner bank (spec 2.5). The record limit (WEBHOOK_MAX_RECORDS, default 5,000) is enforced with 413 before this schema is applied.
 */
export interface BankWebhookRequest {
  /**
   * Optional schema reference; ignored.
   */
  $schema?: string;
  /**
   * @minItems 1
   */
  transactions: [BankTransaction, ...BankTransaction[]];
}
/**
 * Batch status report, sent only after the whole batch is durably committed. The batch is judged as a whole for its form (otherwise 4xx and nothing stored) and record by record for its business outcome.
 */
export interface BankWebhookResponse {
  /**
   * Id of the archived request body.
   */
  batch_id: string;
  received_at: string;
  /**
   * True when any record is a conflict: alert on it; resending the batch will not change the outcome.
   */
  has_conflicts: boolean;
  summary: {
    records: number;
    accepted: number;
    duplicate: number;
    updated: number;
    conflict: number;
  };
  /**
   * One outcome per record, in the order of the request.
   */
  results: BankRecordResult[];
}
/**
 * The merchant's order as POST /v2/checkout answers an API client (201 opened, 200 resumed), and as its return page answers one asking for JSON.
 */
export interface CheckoutOrderResponse {
  /**
   * The service's order number (fpx_seller_order_no).
   */
  orderNo: string;
  agency: string;
  /**
   * The merchant's reference, as sent.
   */
  refNo: string;
  /**
   * The order's amount (net of any add charge), ringgit with 2 decimals.
   */
  amount: string;
  /**
   * Only success may be fulfilled, and only on a verified direct callback or report.
   */
  status: 'pending' | 'success' | 'failed';
  /**
   * False when this request opened the order; true when an unpaid order of this refNo and amount was resumed.
   */
  resumed: boolean;
  /**
   * Path of the order's checkout page on {base_url}, with its form token: where to send the payer.
   */
  checkoutUrl: string;
}
/**
 * A payment order (spec 2.1), sent form-encoded to POST /v2/checkout. Every value is ASCII, at most 255 bytes (checked before this schema, with the position of the first offending character).
 */
export interface CheckoutRequest {
  /**
   * Agency code.
   */
  agency: string;
  /**
   * The merchant's unique reference of the order; no `~`. Re-posting the same refNo and amount resumes the unpaid order.
   */
  refNo: string;
  /**
   * Ringgit with exactly two decimals, at least 1.00 and at most CHECKOUT_MAX_AMOUNT (default 30000.00).
   */
  amount: string;
  /**
   * The payer's e-mail; the receipt goes here.
   */
  email: string;
  /**
   * Absolute http(s) URL on a host the agency allows; both callbacks go here.
   */
  returnUrl: string;
  /**
   * Optional merchant reference, letters and digits only; reported as `<refNo>~<extraData>` in the fpx detail.
   */
  extraData?: string;
  /**
   * Optional; one of the agency's payment categories.
   */
  paymentCategory?: string;
  /**
   * Signed orders: Unix seconds, at most 60 s ahead (5.3).
   */
  exp?: string;
  /**
   * Signed orders: 16 hex characters by the POST rule of 5.3 with the agency's API key.
   */
  signature?: string;
}
/**
 * The answer of POST /api/duitnowqr/v1/generator (201): where the PNG is served, and the DuitNow QR payload it encodes.
 */
export interface DuitNowQrResponse {
  /**
   * {PUBLIC_REPORTS_URL}/api/qrcode/v1/png/<token>.png: unguessable, served until expiresAt; ?size=128..1024 (pixels, default 256).
   */
  pngUrl: string;
  /**
   * The EMVCo merchant-presented payload in the DuitNow form, ending in data object 63 (CRC-16/CCITT-FALSE).
   */
  payload: string;
  /**
   * When pngUrl stops serving (410): created + QR_PNG_TTL_DAYS (90 days).
   */
  expiresAt: string;
}
/**
 * The ledger job's payload: one batch's normalised versions to append to one sink's ledger.
 */
export interface LedgerJob {
  /**
   * The webhook batch (its id).
   */
  batchId: string;
  /**
   * An agency code, or #test (the bank's live tests).
   */
  sink: string;
}
/**
 * The normalise job's payload: one stored webhook batch to normalise (written with the batch).
 */
export interface NormaliseJob {
  /**
   * The webhook batch (its id).
   */
  batchId: string;
}
/**
 * The receipt job's payload: the order whose receipt to e-mail to its payer.
 */
export interface ReceiptJob {
  /**
   * The order number.
   */
  orderNo: string;
}
/**
 * The reconciliation e-mail's payload: the run whose workbook to send, and for a re-mail how many were sent before.
 */
export interface ReconEmailJob {
  /**
   * The reconciliation run.
   */
  runId: number;
  /**
   * A re-mail (the dashboard's): how many e-mails of the run had been sent when it was asked for; sent unless one was since.
   */
  sentBefore?: number;
}
/**
 * The nightly reconciliation's payload: the business day to reconcile; none (the cron's job) means the day before the one it runs in, in Kuala Lumpur.
 */
export interface ReconNightlyJob {
  /**
   * A business day, YYYY-MM-DD.
   */
  day?: string;
}
/**
 * RFC 9457 problem details, served as application/problem+json.
 */
export interface Problem {
  /**
   * A URI naming the problem; stable, documented in docs/errors.md.
   */
  type: string;
  title: string;
  status: number;
  detail?: string;
  request_id?: string;
  /**
   * Every problem found, each with a JSON pointer into the request.
   */
  errors?: {
    pointer: string;
    message: string;
    /**
     * Index of the offending record, for batch requests.
     */
    index?: number;
    orderno?: string;
  }[];
  /**
   * True when the errors list was cut at its limit.
   */
  errors_truncated?: boolean;
}
/**
 * The answer of POST /api/qrcode/v1/generator (201): where the PNG is served, and the signed pay link it encodes.
 */
export interface QrCodeResponse {
  /**
   * {PUBLIC_REPORTS_URL}/api/qrcode/v1/png/<token>.png: unguessable, served until expiresAt; ?size=128..1024 (pixels, default 256).
   */
  pngUrl: string;
  /**
   * The signed pay link the QR code holds: {PUBLIC_BASE_URL}/pay/{agency}/{paymentCategory}/{refNo}/{amount}?x.<key>=<value>&sig=<32 hex>. It never expires.
   */
  payUrl: string;
  /**
   * When pngUrl stops serving (410): created + QR_PNG_TTL_DAYS (90 days).
   */
  expiresAt: string;
}
/**
 * A QR code request (spec 2.2), sent form-encoded to POST /api/qrcode/v1/generator or /api/duitnowqr/v1/generator and signed by the POST rule of 5.3 with the agency's API key. extras travel as one form field per key, `extras[<key>]=<value>`, signed like any other field under that literal name (docs/qr.md).
 */
export interface QrRequest {
  /**
   * Agency code; the API key that signs the request must be this agency's.
   */
  agency: string;
  /**
   * One of the agency's payment categories.
   */
  paymentCategory: string;
  /**
   * The merchant's reference: 1 to 255 printable ASCII characters, no `~`. A DuitNow QR holds at most 25 (its bill number).
   */
  refNo: string;
  /**
   * Ringgit with exactly two decimals, at least 1.00 and at most CHECKOUT_MAX_AMOUNT (default 30000.00).
   */
  amount: string;
  /**
   * Optional key/value pairs carried by the signed pay link into the order (not by a DuitNow QR). Form fields `extras[<key>]=<value>`.
   */
  extras?: {
    [k: string]: string;
  };
  /**
   * How often the signed pay link may be paid: `once` (the default: a household's fitrah QR; once paid, the pay page says so) or `many` (a poster: every payer pays separately). Not for a DuitNow QR.
   */
  uses?: 'once' | 'many';
  /**
   * Unix seconds, at most 60 s ahead (5.3).
   */
  exp: string;
  /**
   * 16 hex characters by the POST rule of 5.3 with the agency's API key.
   */
  signature: string;
}
/**
 * The query of GET /api/report/v1/fpxrequest: fpx_seller_order_no or refno, exactly one of them. Each key at most once (a repeated key is 400 repeated-parameter).
 */
export interface OrderQuery {
  /**
   * The order number amil gave the order; or give refno.
   */
  fpx_seller_order_no?: string;
  /**
   * The merchant's refNo, looked up in one agency: with agency when the credentials cover several.
   */
  refno?: string;
  /**
   * The agency of refno; required with a signed GET, or a token covering several agencies.
   */
  agency?: string;
}
/**
 * The query of GET /api/user/v1/transactions. Each key at most once (a repeated key is 400 repeated-parameter); keys not named here (exp, signature of a signed GET) are not read.
 */
export interface PayerTransactionsQuery {
  /**
   * Required with a signed GET (the agency whose API key signs it). With a bearer token: one of its agencies; without it, all of them.
   */
  agency?: string;
  /**
   * The payer's e-mail address (compared without regard to case).
   */
  email: string;
  /**
   * Page size; -1 = every row (streamed).
   */
  items: number;
  /**
   * 0-based page number: iterate from 0 until a page has fewer rows than items.
   */
  page: number;
}
/**
 * The query of GET /api/report/v1/payment (spec 4.2). Each key at most once (a repeated key is 400 repeated-parameter); keys not named here (exp, signature of a signed GET) are not read.
 */
export interface PaymentReportQuery {
  /**
   * Required with a signed GET. With a bearer token: one of its agencies; without it, all of them combined.
   */
  agency?: string;
  output: 'json';
  /**
   * 1: paid orders only; 0: every other order.
   */
  is_approved?: '0' | '1';
  /**
   * Only the order with this fpx_seller_order_no.
   */
  seller_order_no?: string;
  /**
   * First UTC+8 calendar day of created_date; without start and end, every payment.
   */
  start?: string;
  /**
   * Last UTC+8 calendar day of created_date; not before start.
   */
  end?: string;
  /**
   * Page size; -1 = every row (streamed).
   */
  items: number;
  /**
   * 0-based page number: iterate from 0 until a page has fewer rows than items.
   */
  page: number;
}
/**
 * The query of GET /api/report/v1/reconciliation. Each key at most once (a repeated key is 400 repeated-parameter); keys not named here (exp, signature of a signed GET) are not read.
 */
export interface ReconciliationRunsQuery {
  /**
   * Required with a signed GET, or a token covering several agencies.
   */
  agency?: string;
  /**
   * First business day.
   */
  start?: string;
  /**
   * Last business day.
   */
  end?: string;
  /**
   * At most this many runs, newest business day first.
   */
  items: number;
}
/**
 * The query of GET /api/report/v1/zakat. Each key at most once (a repeated key is 400 repeated-parameter); keys not named here (exp, signature of a signed GET) are not read.
 */
export interface ZakatReportQuery {
  /**
   * Required with a signed GET. With a bearer token: one of its agencies; without it, all of them combined.
   */
  agency?: string;
  /**
   * First business day (UTC+8); default today.
   */
  start?: string;
  /**
   * Last business day; default start.
   */
  end?: string;
  /**
   * Page size; -1 = every row (streamed).
   */
  items: number;
  /**
   * 0-based page number: iterate from 0 until a page has fewer rows than items.
   */
  page: number;
}
/**
 * An agency's reconciliation runs, newest business day first. Each run is one workbook of one business day, read as of an instant (as_of): versions received later are not in it.
 */
export interface ReconciliationRuns {
  status: 'OK';
  data: {
    run_id: number;
    agency: string;
    business_date: string;
    trigger: 'nightly' | 'manual' | 'replay';
    /**
     * The instant the day was read as of.
     */
    as_of: string;
    finished_at: string;
    /**
     * SHA-256 of the records and totals shown; equal for two runs that read the same records.
     */
    fingerprint: string;
    workbook: {
      /**
       * GET it with the same credentials.
       */
      url: string;
      file_name: string;
      sha256: string;
      bytes: number;
    };
    input_counts: {
      [k: string]: number;
    };
    totals: {
      success: {
        count: number;
        /**
         * Ringgit with 2 decimals.
         */
        amount: string;
      };
      pending: {
        count: number;
        /**
         * Ringgit with 2 decimals.
         */
        amount: string;
      };
      failed: {
        count: number;
        /**
         * Ringgit with 2 decimals.
         */
        amount: string;
      };
      /**
       * Whether pending at the start of the day + the day's movements = pending at as-of.
       */
      pending_roll_balances: boolean;
      adjustments: {
        count: number;
        change_to_collected: string;
      };
    };
    /**
     * The run of the same day before this one.
     */
    previous_run: number | null;
    /**
     * What differs from the previous run, cell by cell.
     */
    changes: string | null;
    deliveries: {
      attempt: number;
      at: string;
      outcome: 'sent' | 'failed';
      recipients: string[];
    }[];
  }[];
}
/**
 * The answer of GET /api/echo, a connectivity check: the query sent, with the time and request id.
 */
export interface Echo {
  status: 'OK';
  time: string;
  request_id: string;
  query: {
    [k: string]: string;
  };
}
/**
 * The answer of GET /api/report/v1/fpxrequest: one order, its status history and its direct callbacks with every delivery attempt.
 */
export interface OrderReport {
  status: 'OK';
  data: PaymentReportRow & {
    /**
     * A signed pay link's extras ({} when it had none); null for other orders (docs/qr.md).
     */
    extras: {
      [k: string]: string;
    } | null;
    history: {
      /**
       * UTC+8, YYYY-MM-DD HH:mm:ss.
       */
      at: string;
      status: string;
      /**
       * "" before the bank answers.
       */
      fpx_debit_auth_code: string;
      /**
       * What changed the status (checkout, return, enquiry, ...).
       */
      source: string;
    }[];
    callbacks: {
      status: string;
      url: string;
      state: 'queued' | 'delivered' | 'superseded' | 'gone' | 'dead';
      /**
       * UTC+8, YYYY-MM-DD HH:mm:ss.
       */
      created_at: string;
      /**
       * While queued: the next try.
       */
      next_attempt_at: string | null;
      attempts: {
        at: string;
        status_code: number | null;
        latency_ms: number;
        error: string | null;
        response_prefix: string;
      }[];
    }[];
  };
}
/**
 * A payment as the reports show it (spec 2.3 names the first four). The payment report, the payer's history and the order lookup (with more fields) all show it so.
 */
export interface PaymentReportRow {
  /**
   * The order number amil gave the order.
   */
  fpx_seller_order_no: string;
  /**
   * UTC+8, YYYY-MM-DD HH:mm:ss.
   */
  created_date: string;
  /**
   * 1 when paid.
   */
  is_approved: 0 | 1;
  /**
   * The acquirer's code; "" before it answers.
   */
  fpx_debit_auth_code: string;
  refNo: string;
  extraData: string | null;
  /**
   * Ringgit, two decimals.
   */
  amount: string;
  /**
   * Ringgit, two decimals.
   */
  addCharge: string;
  status: 'pending' | 'success' | 'failed';
  payment_method: 'fpx' | 'card' | 'ewallet' | null;
  email: string;
  fpx_txn_id: string | null;
  /**
   * Kuala Lumpur wall time, as the acquirer reports it.
   */
  fpx_txn_time: string | null;
  /**
   * The agency whose payment it is.
   */
  agency: string;
  /**
   * checkout: the merchant's order; pay-link: a payment made on a pay page.
   */
  source: 'checkout' | 'pay-link';
  /**
   * The pay link of a pay-link payment; null otherwise.
   */
  pay_link: string | null;
}
/**
 * The answer of GET /api/user/v1/transactions: a payer's payments within the agencies the credentials cover, newest first, a page at a time (items=-1: every one).
 */
export interface PayerTransactions {
  status: 'OK';
  data: PaymentReportRow[];
  stats: {
    total_pages: number;
    total_rows: number;
    page: number;
    items: number;
  };
}
/**
 * The answer of GET /api/report/v1/payment: the envelope of spec 2.3. With items=-1, every row in one page (page 0, items -1).
 */
export interface PaymentReport {
  status: 'OK';
  data: PaymentReportRow[];
  stats: {
    total_pages: number;
    total_rows: number;
    page: number;
    items: number;
  };
}
/**
 * The answer of GET /api/version, a connectivity check.
 */
export interface Version {
  name: 'amil';
  version: string;
  /**
   * The git commit this process runs from; null when unknown.
   */
  commit: string | null;
  started_at: string;
  api: {
    report: 'v1';
    checkout: 'v2';
  };
}
/**
 * The answer of GET /api/report/v1/zakat: the envelope of spec 2.3, one row per bank posting (its latest version), every field of spec 2.5, null where the bank sent none. With items=-1, every row in one page (page 0, items -1).
 */
export interface ZakatReport {
  status: 'OK';
  data: {
    orderno: string;
    /**
     * UTC+8, YYYY-MM-DD HH:mm:ss
     */
    created_date: string;
    business_date: string;
    status: 'success' | 'pending' | 'failed';
    /**
     * Ringgit, two decimals
     */
    amount: string;
    name: string;
    /**
     * The transaction e-mail, lower-case
     */
    email: string;
    /**
     * The bank record data.email, lower-case (may differ from email)
     */
    data_email: string | null;
    zakat_name: string | null;
    zakat_ic_no: string | null;
    zakat_phone: string | null;
    zakat_address: string | null;
    zakat_postcode: string | null;
    zakat_city: string | null;
    zakat_state: string | null;
    /**
     * Canonical (zakat_fitrah is fitrah)
     */
    zakat_type: string | null;
    zakat_type_raw: string | null;
    zakat_year: string | null;
    /**
     * data.zakat_amount in ringgit, two decimals
     */
    zakat_amount: string | null;
    /**
     * Ringgit, two decimals
     */
    zakat_rate: string | null;
    zakat_dependant: number | null;
    /**
     * docs/exceptions.md
     */
    exceptions: string[];
    /**
     * The agency whose posting it is
     */
    agency: string;
  }[];
  stats: {
    total_pages: number;
    total_rows: number;
    page: number;
    items: number;
  };
}
