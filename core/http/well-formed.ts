import { escapePointer, type FieldError } from '../../schemas/index.ts';

/**
 * Whether JSON text may decode to a string that is not well-formed Unicode: only an escape of a surrogate
 * (`\ud800`) can make one, since the text itself was decoded from valid UTF-8. Cheap on text that holds no
 * escape at all, which is nearly every body.
 */
export function mayHoldLoneSurrogates(text: string): boolean {
  return text.includes('\\u') && /\\u[dD][89a-fA-F]/.test(text);
}

const LONE_SURROGATE =
  'is not well-formed Unicode: it holds a lone surrogate (an escape such as \\ud800 without its pair)';

/**
 * The strings, keys included, of a parsed JSON value that are not well-formed Unicode, each as a pointer (at
 * most `limit`). Such text cannot be stored as UTF-8: SQLite would keep bytes that read back as U+FFFD,
 * PostgreSQL refuses it (decision 275).
 */
export function illFormedStrings(value: unknown, limit: number, at = ''): FieldError[] {
  const found: FieldError[] = [];
  const walk = (v: unknown, pointer: string) => {
    if (found.length >= limit) return;
    if (typeof v === 'string') {
      if (!(v as string & { isWellFormed(): boolean }).isWellFormed())
        found.push({ pointer, message: LONE_SURROGATE });
      return;
    }
    if (Array.isArray(v)) {
      v.forEach((item, i) => walk(item, `${pointer}/${i}`));
      return;
    }
    if (v === null || typeof v !== 'object') return;
    for (const [key, item] of Object.entries(v)) {
      const keyPointer = `${pointer}/${escapePointer(key)}`;
      if (!(key as string & { isWellFormed(): boolean }).isWellFormed())
        found.push({ pointer: keyPointer, message: `(a key) ${LONE_SURROGATE}` });
      walk(item, keyPointer);
    }
  };
  walk(value, at);
  return found.slice(0, limit);
}
