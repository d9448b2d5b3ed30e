import type { BankTransaction } from '../../schemas/index.ts';
import type { BankRoute } from '../../core/config.ts';
import type { PreparedRecord } from '../../core/store/index.ts';
import { canonicalJson, sha256Hex } from '../../core/canonical-json.ts';
import { ringgitNumberToSen } from '../../core/money.ts';
import { businessDate, normaliseOffset, parseOffsetDateTime } from '../../core/time.ts';

/**
 * Derives what the store keeps of a schema-valid record: integer sen, the UTC instant and its
 * Asia/Kuala_Lumpur business date, the route, and the canonical form that "identical" is judged on.
 * The stored record reads an empty optional string as absent and the offset as `+hh:mm`, so a resend
 * written either way is the same record; the archive keeps the body as it came.
 */
export function prepareRecord(
  record: BankTransaction,
  routes: Readonly<Record<string, BankRoute>>,
  time = parseOffsetDateTime(record.time),
): PreparedRecord {
  const route = routes[record.agency];
  if (!route || !time) throw new Error('prepareRecord needs a schema-valid record');
  const normalTime = normaliseOffset(record.time);
  const data = withoutEmptyStrings(record.data);
  // Most records are already in the stored form: their canonical JSON is read off them, not off a copy.
  const unchanged = normalTime === record.time && data === record.data;
  const canonical = canonicalJson(unchanged ? record : { ...record, time: normalTime, data });
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

/**
 * `data` without its empty strings: the schema lets only free-text fields be empty, meaning not given.
 * The object itself when it has none (most records): nothing is copied for them.
 */
function withoutEmptyStrings(data: BankTransaction['data']): BankTransaction['data'] {
  for (const key in data) {
    if ((data as Record<string, unknown>)[key] === '')
      return Object.fromEntries(Object.entries(data).filter(([, value]) => value !== ''));
  }
  return data;
}
