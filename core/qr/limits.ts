/**
 * The bounds of a QR image, apart from the encoder (png.ts): the routes check requests against them without
 * loading qrcode and pngjs, which only the rendering threads need.
 */

/** Bounds and default of a QR image's width and height, in pixels. */
export const QR_SIZE = { min: 128, max: 1024, default: 256 } as const;
/** Longest content a QR code of this service holds: beyond it a printed code is hard to scan. */
export const MAX_QR_CONTENT = 1024;
/** The quiet zone around the code, in modules (ISO/IEC 18004 asks for 4). */
export const QUIET_ZONE = 4;

/** The content does not fit a QR code of this size with whole-pixel modules. */
export class QrTooDenseError extends RangeError {
  constructor(readonly minimumSize: number) {
    super(`the QR code needs an image of at least ${minimumSize} pixels`);
    this.name = 'QrTooDenseError';
  }
}
