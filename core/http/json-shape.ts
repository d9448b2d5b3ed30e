import type { FieldError } from '../../schemas/index.ts';

/** Bounds on a JSON document's shape, checked on its text before it is parsed. */
export interface JsonShapeLimits {
  /** Most nested objects and arrays. */
  maxDepth: number;
  /** Most keys of one object. */
  maxKeys: number;
}

interface Frame {
  object: boolean;
  /** Keys read (object) or commas seen, i.e. the index of the current element (array). */
  count: number;
  keyStart: number;
  keyEnd: number;
  expectKey: boolean;
}

/**
 * The first object with too many keys, or value nested too deep, with its JSON pointer; undefined when
 * the shape is within the limits. It scans the text only for structure (strings, brackets, commas),
 * leaving syntax to JSON.parse: parsing one object of 400,000 keys costs a quarter of a second of the
 * event loop before a validator can even refuse it, and scanning the text costs a few milliseconds.
 */
export function findJsonShapeProblem(text: string, limits: JsonShapeLimits): FieldError | undefined {
  const stack: Frame[] = [];
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      const start = i;
      i += 1;
      while (i < text.length) {
        const d = text.charCodeAt(i);
        if (d === 0x22) break;
        i += d === 0x5c ? 2 : 1;
      }
      const top = stack.at(-1);
      if (!top?.object || !top.expectKey) continue;
      top.expectKey = false;
      top.keyStart = start;
      top.keyEnd = i + 1;
      top.count += 1;
      if (top.count > limits.maxKeys) {
        return {
          pointer: pointerOf(text, stack.slice(0, -1)),
          message: `has more than ${limits.maxKeys} properties`,
        };
      }
    } else if (c === 0x7b || c === 0x5b) {
      if (stack.length >= limits.maxDepth) {
        return {
          pointer: pointerOf(text, stack),
          message: `is nested deeper than ${limits.maxDepth} levels`,
        };
      }
      stack.push({ object: c === 0x7b, count: 0, keyStart: 0, keyEnd: 0, expectKey: c === 0x7b });
    } else if (c === 0x7d || c === 0x5d) {
      stack.pop();
    } else if (c === 0x2c) {
      const top = stack.at(-1);
      if (top?.object) top.expectKey = true;
      else if (top) top.count += 1;
    }
  }
  return undefined;
}

/** The pointer of the value each frame is currently at (its last key, or its element index). */
function pointerOf(text: string, frames: readonly Frame[]): string {
  return frames
    .map((frame) => {
      if (!frame.object) return `/${frame.count}`;
      let key: unknown;
      try {
        key = JSON.parse(text.slice(frame.keyStart, frame.keyEnd));
      } catch {
        key = text.slice(frame.keyStart + 1, frame.keyEnd - 1);
      }
      return `/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
    })
    .join('');
}
