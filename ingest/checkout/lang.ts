import type { AppContext } from '../../core/http/state.ts';
import { LANGS, type Lang } from './i18n.ts';

/** The preference cookie: strictly necessary (it only remembers the payer's own choice), so no banner. */
export const LANG_COOKIE = 'amil_lang';
const ONE_YEAR_MS = 365 * 24 * 60 * 60 * 1000;

const isLang = (value: unknown): value is Lang => LANGS.includes(value as Lang);

/**
 * The payer's language: `?lang=` (a switch on the page, remembered in the preference cookie), else the
 * cookie, else the browser's Accept-Language (English when it names neither).
 */
export function payerLang(ctx: AppContext): Lang {
  const cached = ctx.state.payerLang;
  if (isLang(cached)) return cached;
  const asked = ctx.query.lang;
  let lang: Lang;
  if (isLang(asked)) {
    lang = asked;
    ctx.cookies.set(LANG_COOKIE, lang, {
      httpOnly: true,
      sameSite: 'lax',
      maxAge: ONE_YEAR_MS,
      overwrite: true,
    });
  } else {
    const remembered = ctx.cookies.get(LANG_COOKIE);
    lang = isLang(remembered) ? remembered : ctx.acceptsLanguages('en', 'ms') === 'ms' ? 'ms' : 'en';
  }
  ctx.state.payerLang = lang;
  return lang;
}

/** The same page in another language (GET pages only: a POST's page cannot be fetched again by a link). */
export function switchHref(ctx: AppContext, lang: Lang): string | undefined {
  if (ctx.method !== 'GET') return undefined;
  const query = new URLSearchParams(ctx.querystring);
  query.set('lang', lang);
  return `${ctx.path}?${query.toString()}`;
}
