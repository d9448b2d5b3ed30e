import type { BankTransaction } from '../../schemas/index.ts';
import type { BankRoute } from '../../core/config.ts';
import type { PreparedRecord } from '../../core/store/index.ts';
import { canonicalJson, sha256Hex } from '../../core/canonical-json.ts';
import { ringgitNumberToSen } from '../../core/money.ts';
import { businessDate, parseOffsetDateTime } from '../../core/time.ts';

/**
 * Derives what the store keeps of a schema-valid record: integer sen, the UTC instant and its
 * Asia/Kuala_Lumpur business date, the route, and the canonical form that "identical" is judged on.
 */
export function prepareRecord(
  record: BankTransaction,
  routes: Readonly<Record<string, BankRoute>>,
): PreparedRecord {
  const route = routes[record.agency];
  const time = parseOffsetDateTime(record.time);
  if (!route || !time) throw new Error('prepareRecord needs a schema-valid record');
  const canonical = canonicalJson(record);
  return {
    orderno: record.orderno,
    bankAgency: record.agency,
    route: route.kind,
    agencyCode: route.kind === 'agency' ? route.agency : null,
    status: record.status,
    amountSen: ringgitNumberToSen(record.amount),
    name: record.name,
    email: record.email,
    timeRaw: record.time,
    timeUtc: time.toISOString(),
    businessDate: businessDate(time),
    canonical,
    sha256: sha256Hex(canonical),
  };
}
