/**
 * The names an agency's accountant knows the zakat types and states by (spec 2.5 lists the codes). Malay,
 * as the agencies' own books and forms name them; the code stays beside the name in its own column.
 */
const TYPE_NAMES: Readonly<Record<string, string>> = {
  fitrah: 'Zakat Fitrah',
  zakat_emas: 'Zakat Emas',
  zakat_kwsp: 'Zakat KWSP',
  zakat_padi: 'Zakat Padi',
  zakat_pendapatan: 'Zakat Pendapatan',
  zakat_perak: 'Zakat Perak',
  zakat_perniagaan: 'Zakat Perniagaan',
  zakat_pertanian: 'Zakat Pertanian',
  zakat_qada: 'Zakat Qada',
  zakat_rikaz: 'Zakat Rikaz',
  zakat_saham: 'Zakat Saham',
  zakat_simpanan: 'Zakat Simpanan',
  zakat_ternakan: 'Zakat Ternakan',
};

const STATE_NAMES: Readonly<Record<string, string>> = {
  johor: 'Johor',
  kedah: 'Kedah',
  kelantan: 'Kelantan',
  melaka: 'Melaka',
  negeri_sembilan: 'Negeri Sembilan',
  pahang: 'Pahang',
  pulau_pinang: 'Pulau Pinang',
  perak: 'Perak',
  perlis: 'Perlis',
  sabah: 'Sabah',
  sarawak: 'Sarawak',
  selangor: 'Selangor',
  terengganu: 'Terengganu',
  kuala_lumpur: 'W.P. Kuala Lumpur',
  labuan: 'W.P. Labuan',
  putrajaya: 'W.P. Putrajaya',
};

/** The zakat type and state codes of spec 2.5, in name order (the dashboard's filter choices). */
export const TYPE_CODES: readonly string[] = Object.keys(TYPE_NAMES);
export const STATE_CODES: readonly string[] = Object.keys(STATE_NAMES).sort((a, b) =>
  (STATE_NAMES[a] ?? a).localeCompare(STATE_NAMES[b] ?? b),
);

/** What a record without the field shows; its code column keeps `(none)`. */
export const NOT_GIVEN = 'Not given';
export const NONE_CODE = '(none)';

/** A zakat type's name from its canonical code; a checkout category we have no name for shows its code. */
export function typeName(code: string): string {
  if (code === NONE_CODE) return NOT_GIVEN;
  return TYPE_NAMES[code] ?? code;
}

/** A state's name from its code. */
export function stateName(code: string | null): string {
  if (code === null || code === NONE_CODE) return NOT_GIVEN;
  return STATE_NAMES[code] ?? code;
}
