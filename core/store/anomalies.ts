export interface AnomalyRow {
  id: string;
  kind: string;
  orderno: string;
  reason: string;
  storedVersion: number;
  storedRecord: string;
  incomingRecord: string;
  firstBatchId: string;
  firstSeenAt: string;
  lastSeenAt: string;
  seenCount: number;
  businessDate: string;
  status: 'open' | 'resolved';
  resolvedAt: string | null;
  resolutionNote: string | null;
}

/** Records that contradicted what was stored, for ops to look at and resolve. */
export interface AnomaliesRepository {
  list(filter?: { status?: 'open' | 'resolved'; businessDate?: string }): Promise<AnomalyRow[]>;

  /** Marks an open anomaly resolved with a note. False when there is no such open anomaly. */
  resolve(id: string, note: string, now: Date): Promise<boolean>;
}
