/** Schema-valid bank records for the ingest benchmark; every call site supplies a unique orderno. */
import type { BankTransaction } from '../schemas/index.ts';

/** The n-th benchmark record: amounts, names and IC numbers vary with n so no two rows are identical. */
export function benchRecord(orderno: string, n: number): BankTransaction {
  const sen = 100 + (n % 1_000_000);
  const ringgit = (sen / 100).toFixed(2);
  return {
    agency: n % 2 === 0 ? 'BANKLZS' : 'BANKPPZ',
    orderno,
    amount: Number(ringgit),
    name: `Pembayar Zakat ${n}`,
    email: `payer${n}@example.my`,
    time: '2026-11-20T10:00:00+08:00',
    status: 'success',
    data: {
      email: `payer${n}@example.my`,
      zakat_name: `Pembayar Zakat ${n}`,
      zakat_ic_no: String(850_312_000_000 + (n % 1_000_000)),
      zakat_state: 'selangor',
      zakat_type: 'zakat_pendapatan',
      zakat_year: '2026',
      zakat_phone: '0123456789',
      zakat_address: 'No 1, Jalan Damai',
      zakat_postcode: '40100',
      zakat_city: 'Shah Alam',
      zakat_amount: ringgit,
    },
  };
}

/** Hands out ordernos unique across a whole run: `<prefix>-<run tag>-<counter>`. */
export function orderSequence(prefix: string): () => { orderno: string; n: number } {
  const tag = `${Date.now().toString(36)}${process.pid.toString(36)}`;
  let n = 0;
  return () => {
    n += 1;
    return { orderno: `${prefix}-${tag}-${n}`, n };
  };
}

/**
 * The JSON text of benchRecord(orderno, n), built by hand: about twice as fast as JSON.stringify, which
 * matters because the load client must not be the bottleneck. bench/ingest.ts checks the two agree.
 * Only safe for ordernos without characters JSON escapes (the sequence below never has any).
 */
export function benchRecordJson(orderno: string, n: number): string {
  const sen = 100 + (n % 1_000_000);
  const ringgit = (sen / 100).toFixed(2);
  const agency = n % 2 === 0 ? 'BANKLZS' : 'BANKPPZ';
  const email = `payer${n}@example.my`;
  const name = `Pembayar Zakat ${n}`;
  return (
    `{"agency":"${agency}","orderno":"${orderno}","amount":${Number(ringgit)},"name":"${name}",` +
    `"email":"${email}","time":"2026-11-20T10:00:00+08:00","status":"success","data":{"email":"${email}",` +
    `"zakat_name":"${name}","zakat_ic_no":"${850_312_000_000 + (n % 1_000_000)}","zakat_state":"selangor",` +
    `"zakat_type":"zakat_pendapatan","zakat_year":"2026","zakat_phone":"0123456789",` +
    `"zakat_address":"No 1, Jalan Damai","zakat_postcode":"40100","zakat_city":"Shah Alam",` +
    `"zakat_amount":"${ringgit}"}}`
  );
}

/** A webhook body of `size` fresh records. */
export function batchBody(size: number, next: () => { orderno: string; n: number }): string {
  const transactions: string[] = [];
  for (let i = 0; i < size; i += 1) {
    const { orderno, n } = next();
    transactions.push(benchRecordJson(orderno, n));
  }
  return `{"transactions":[${transactions.join(',')}]}`;
}
