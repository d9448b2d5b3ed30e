import { createHash } from 'node:crypto';

/** An agency's logo as stored in its settings: the image, its type, and a hash for the ETag. */
export interface AgencyLogo {
  type: 'image/png' | 'image/jpeg' | 'image/webp';
  base64: string;
  sha256: string;
}

/** Read on every pay page's agency load, so kept small: a logo, not a banner. */
export const MAX_LOGO_BYTES = 64 * 1024;

/**
 * A logo file checked: PNG, JPEG or WebP by its leading bytes (never SVG, which can carry script), at most
 * 64 KB. Returns a reason when refused.
 */
export function agencyLogo(bytes: Buffer): AgencyLogo | string {
  if (bytes.length === 0 || bytes.length > MAX_LOGO_BYTES)
    return `a logo is 1 byte to ${MAX_LOGO_BYTES / 1024} KB`;
  const type = bytes.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    ? 'image/png'
    : bytes.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]))
      ? 'image/jpeg'
      : bytes.subarray(0, 4).toString('latin1') === 'RIFF' &&
          bytes.subarray(8, 12).toString('latin1') === 'WEBP'
        ? 'image/webp'
        : undefined;
  if (!type) return 'a logo is a PNG, JPEG or WebP image';
  return {
    type,
    base64: bytes.toString('base64'),
    sha256: createHash('sha256').update(bytes).digest('base64url'),
  };
}
