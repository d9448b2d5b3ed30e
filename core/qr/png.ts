import QRCode from 'qrcode';
import { PNG } from 'pngjs';
import { QR_SIZE, QUIET_ZONE, QrTooDenseError } from './limits.ts';

export { MAX_QR_CONTENT, QR_SIZE, QrTooDenseError } from './limits.ts';

/**
 * A PNG of the QR code of `text` (byte mode, error correction M), exactly `size` pixels square: every
 * module a whole number of pixels (sharp when printed), centred, with at least the 4-module quiet zone.
 * Greyscale, so small. Throws QrTooDenseError when even one pixel per module does not fit.
 */
export function renderQrPng(text: string, size: number = QR_SIZE.default): Buffer {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' });
  const span = modules.size + 2 * QUIET_ZONE;
  const scale = Math.floor(size / span);
  if (scale < 1) throw new QrTooDenseError(span);
  const offset = Math.floor((size - modules.size * scale) / 2);
  const png = new PNG({ width: size, height: size });
  png.data.fill(0xff);
  for (let row = 0; row < modules.size; row += 1) {
    for (let col = 0; col < modules.size; col += 1) {
      if (!modules.get(row, col)) continue;
      for (let y = 0; y < scale; y += 1) {
        const start = ((offset + row * scale + y) * size + offset + col * scale) * 4;
        for (let x = 0; x < scale; x += 1) {
          const at = start + x * 4;
          png.data[at] = 0;
          png.data[at + 1] = 0;
          png.data[at + 2] = 0;
        }
      }
    }
  }
  return PNG.sync.write(png, { colorType: 0 });
}
