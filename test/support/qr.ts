/** Reading QR codes back in tests: PNG bytes decoded with a real QR decoder (jsQR over pngjs), and a TLV parser. */
import jsQRModule from 'jsqr';
import { PNG } from 'pngjs';

// jsqr is CommonJS; under NodeNext its default export arrives as the module itself (it is the function).
const jsQR = jsQRModule as unknown as typeof jsQRModule.default;

/** The text of the QR code in a PNG, with the image size; throws when no code is found. */
export function decodeQrPng(bytes: Uint8Array): { text: string; width: number; height: number } {
  const png = PNG.sync.read(Buffer.from(bytes));
  const rgba = new Uint8ClampedArray(png.data.buffer, png.data.byteOffset, png.data.length);
  const code = jsQR(rgba, png.width, png.height);
  if (!code) throw new Error(`no QR code found in the ${png.width}x${png.height} PNG`);
  return { text: code.data, width: png.width, height: png.height };
}

/** EMVCo data objects in order: id, the length as written, and the value. Throws on a malformed string. */
export function parseTlv(text: string): { id: string; length: number; value: string }[] {
  const objects: { id: string; length: number; value: string }[] = [];
  let at = 0;
  while (at < text.length) {
    const id = text.slice(at, at + 2);
    const lengthText = text.slice(at + 2, at + 4);
    if (!/^\d{2}$/.test(id) || !/^\d{2}$/.test(lengthText))
      throw new Error(`bad data object at ${at}: ${text.slice(at)}`);
    const length = Number(lengthText);
    const value = text.slice(at + 4, at + 4 + length);
    if (value.length !== length) throw new Error(`data object ${id} is cut short`);
    objects.push({ id, length, value });
    at += 4 + length;
  }
  return objects;
}
