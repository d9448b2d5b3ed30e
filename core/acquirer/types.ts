import type { PaymentMethod } from '../store/index.ts';

export interface AcquirerBank {
  id: string;
  /** The bank's own name: stored with the payment and sent in callbacks (`fpx_buyer_bank_name`). */
  name: string;
  /** What the bank list shows when it says more than the name (the sandbox's hints); else the name. */
  label?: string;
}

/** What the acquirer says of a payment: its raw result code ('' while it has none) and transaction. */
export interface AcquirerStatus {
  code: string;
  txnId: string | null;
  /** Kuala Lumpur wall time, `YYYY-MM-DD HH:mm:ss`. */
  txnTime: string | null;
}

/**
 * What a real FPX, card or e-wallet acquirer implements, and the sandbox does: start a payment (the payer
 * is sent to `redirectPath`, and comes back to the order's return page), and tell its status, which is
 * the only result the gateway trusts (never what the payer's browser says).
 */
export interface Acquirer {
  readonly name: string;
  /**
   * True for the sandbox: no money moves. Payer pages then carry a banner and callbacks `fpx.sandbox`;
   * production refuses it unless the deployment says it is staging (core/config.ts).
   */
  readonly sandbox: boolean;
  readonly methods: readonly PaymentMethod[];
  /** The FPX banks a payer picks from. */
  banks(): readonly AcquirerBank[];
  initiate(input: {
    orderNo: string;
    method: PaymentMethod;
    bankId: string | null;
    amountSen: number;
    at: Date;
    /** Where the payer comes back to: the order's return page, with the order's token. */
    returnPath: string;
  }): Promise<{ ref: string; redirectPath: string }>;
  enquire(ref: string): Promise<AcquirerStatus>;
}
