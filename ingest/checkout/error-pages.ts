import type { Deps } from '../../core/deps.ts';
import type { HtmlErrorPage } from '../../core/http/problem.ts';
import { sendPage } from './html.ts';
import { payerLang } from './lang.ts';
import { errorPage } from './pages.ts';

/**
 * The page a browser gets for any refusal (core/http/problem.ts decides by Accept): what happened and
 * what to do next in the payer's language; API clients keep the problem+json.
 */
export function htmlErrorPage(deps: Deps): HtmlErrorPage {
  return (ctx, error) => {
    const page = errorPage(payerLang(ctx), {
      code: error.code,
      status: error.status,
      detail: error.detail,
      errors: error.fieldErrors,
      requestId: String(ctx.state.requestId ?? ''),
    });
    sendPage(ctx, error.status, { ...page, sandbox: deps.acquirer?.sandbox === true });
  };
}
