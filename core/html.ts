/** Escaping HTML for every page and e-mail we write: one rule, one place. */
/** HTML that is already safe to emit (escaped, or markup we wrote). */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

const SPECIAL = /[&<>"']/;

export function escapeHtml(value: string): string {
  // Most values (names, amounts, order numbers) have nothing to escape: a test is cheaper than a replace.
  if (!SPECIAL.test(value)) return value;
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

type Interpolated = SafeHtml | string | number | null | undefined | false | readonly Interpolated[];

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (value instanceof SafeHtml) return value.value;
  if (Array.isArray(value)) {
    let out = '';
    for (const item of value as readonly Interpolated[]) out += render(item);
    return out;
  }
  return escapeHtml(String(value));
}

/** Tagged template: every interpolated value is escaped unless it is SafeHtml (nested templates are). */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): SafeHtml {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i += 1) out += render(values[i]) + (strings[i + 1] ?? '');
  return new SafeHtml(out);
}
