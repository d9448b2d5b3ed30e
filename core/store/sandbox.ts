export interface SandboxPayment {
  ref: string;
  orderNo: string;
  method: string;
  bankId: string | null;
  amountSen: number;
  outcome: string | null;
  txnId: string;
  createdAt: string;
  decidedAt: string | null;
  /** Where the sandbox page sends the payer back: the order's return page, with its token. */
  returnPath: string;
}

/** The sandbox acquirer's own records (it stands in for a bank, so it keeps its own books). */
export interface SandboxRepository {
  create(row: SandboxPayment): Promise<void>;

  get(ref: string): Promise<SandboxPayment | undefined>;

  /** Sets the outcome while it is undecided or pending (a bank resolves a pending payment once). */
  decide(ref: string, outcome: string, pendingCodes: readonly string[], at: string): Promise<boolean>;
}
