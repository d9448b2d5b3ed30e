/**
 * EMVCo merchant-presented QR data objects (the form DuitNow QR uses): each is an ID of two digits, a
 * length of two digits and the value, so no value may be longer than 99 characters. Pure functions.
 */

/** A value that does not fit its data object: refused, never cut. */
export class TlvOverflowError extends RangeError {
  constructor(
    readonly id: string,
    readonly length: number,
  ) {
    super(`data object ${id} would be ${length} characters; at most 99 fit`);
    this.name = 'TlvOverflowError';
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** One data object: `<id><length, 2 digits><value>`. The value must be printable ASCII, 1 to 99 characters. */
export function tlv(id: string, value: string): string {
  if (!/^\d{2}$/.test(id)) throw new TypeError(`a data object ID is two digits (got "${id}")`);
  // Lengths count characters; with ASCII only they are bytes too, as the scanning apps count them.
  if (!PRINTABLE_ASCII.test(value)) throw new TypeError(`data object ${id} must be printable ASCII`);
  if (value.length === 0) throw new TypeError(`data object ${id} must not be empty`);
  if (value.length > 99) throw new TlvOverflowError(id, value.length);
  return `${id}${String(value.length).padStart(2, '0')}${value}`;
}

/** CRC-16/CCITT-FALSE (polynomial 0x1021, initial 0xFFFF, no reflection, no final XOR): 4 upper-case hex. */
export function crc16CcittFalse(text: string): string {
  let crc = 0xffff;
  for (const byte of Buffer.from(text, 'latin1')) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit += 1) {
      crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
    }
  }
  return crc.toString(16).toUpperCase().padStart(4, '0');
}

/** Appends data object 63, the CRC over everything before it including its own ID and length (`6304`). */
export function withCrc(dataObjects: string): string {
  const covered = `${dataObjects}6304`;
  return `${covered}${crc16CcittFalse(covered)}`;
}
